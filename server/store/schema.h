/* schema.h - the migrations in schema/, compiled in by tools/embed-schema.sh. */
#ifndef KC_SCHEMA_H
#define KC_SCHEMA_H

struct schema_migration {
	int level;             /* NNN of schema/NNN_name.sql */
	const char *name;      /* file name */
	const char *sql;
};

extern const struct schema_migration schema_migrations[];
extern const int schema_migrations_count;

#endif
