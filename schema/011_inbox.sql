-- 011_inbox.sql - answers of public-inbox servers kept in the store, so a
-- series taken by message-id is fetched once and read offline thereafter
-- (server/kernel/inbox.c). key: "thread:<message-id>" (the thread's t.mbox.gz,
-- inflated) or "search:<query>" (a search's mbox); status: the HTTP
-- status the server gave (a 404 is kept too: "not on the server" is an
-- answer); body: the inflated mbox bytes ("" for a 404).
CREATE TABLE inbox_cache (
	key TEXT PRIMARY KEY,
	url TEXT NOT NULL,
	status INTEGER NOT NULL,
	body BLOB NOT NULL,
	fetched_s REAL NOT NULL
);
