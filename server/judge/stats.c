/* stats.c - statistics for reports and verdicts; sources cited in stats.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "judge/stats.h"
#include "util.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double *sorted_copy(const double *v, size_t n)
{
	double *s = xmalloc(n * sizeof(*s));
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	return s;
}

static double median_sorted(const double *s, size_t n)
{
	if (!n)
		return NAN;
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

double stats_median(const double *v, size_t n)
{
	if (!n)
		return NAN;
	double *s = sorted_copy(v, n);
	double m = median_sorted(s, n);
	free(s);
	return m;
}

double stats_max(const double *v, size_t n)
{
	double m = NAN;
	for (size_t i = 0; i < n; i++)
		if (isnan(m) || v[i] > m)
			m = v[i];
	return m;
}

double stats_mean(const double *v, size_t n)
{
	double s = 0;
	if (!n)
		return NAN;
	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s / (double)n;
}

void stats_summarize(struct stats_summary *out, const double *v, size_t n)
{
	out->n = n;
	if (!n) {
		out->min = out->max = out->mean = out->median = NAN;
		return;
	}
	double *s = sorted_copy(v, n);
	out->min = s[0];
	out->max = s[n - 1];
	out->median = median_sorted(s, n);
	out->mean = stats_mean(v, n);
	free(s);
}

size_t stats_count_worse(const double *v, size_t n, double threshold,
			 enum stats_better better)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (better == BETTER_LOWER ? v[i] > threshold : v[i] < threshold)
			k++;
	return k;
}

double stats_norm_sf(double z)
{
	return 0.5 * erfc(z / M_SQRT2);
}

/* Doubled mid-ranks of the pooled sample (integers, so sums compare
 * exactly), and the tie term sum(t^3 - t). */
static void pooled_ranks2(long *r2, double *ties, const double *x, size_t nx,
			  const double *y, size_t ny)
{
	size_t n = nx + ny;
	struct item { double v; size_t i; } *it = xmalloc(n * sizeof(*it));
	size_t i, j;

	for (i = 0; i < nx; i++)
		it[i] = (struct item){ x[i], i };
	for (i = 0; i < ny; i++)
		it[nx + i] = (struct item){ y[i], nx + i };
	/* insertion sort by value: n is small where exactness matters and the
	 * normal branch tolerates O(n^2) up to the sizes reports see */
	for (i = 1; i < n; i++) {
		struct item t = it[i];
		for (j = i; j > 0 && it[j - 1].v > t.v; j--)
			it[j] = it[j - 1];
		it[j] = t;
	}
	*ties = 0;
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && it[j].v == it[i].v; j++)
			;
		/* ranks i+1 .. j share the mid-rank (i+1+j)/2; doubled: i+1+j */
		for (size_t k = i; k < j; k++)
			r2[it[k].i] = (long)(i + 1 + j);
		double t = (double)(j - i);
		*ties += t * t * t - t;
	}
	free(it);
}

/* The number of size-k subsets of the n items with doubled ranks r2 per
 * doubled rank sum s, as dist[0 .. *smax]: dynamic programming over the
 * items one at a time (dp[j][s]). The array is the caller's. */
static double *rank_sum_dist(long *smax, const long *r2, size_t n, size_t k)
{
	long top = 0;
	for (size_t i = 0; i < n; i++)
		top += r2[i];
	size_t width = (size_t)top + 1;
	double *dp = xcalloc((k + 1) * width, sizeof(*dp));
	dp[0] = 1;
	for (size_t i = 0; i < n; i++) {
		size_t jmax = i + 1 < k ? i + 1 : k;
		for (size_t j = jmax; j >= 1; j--) {
			double *to = dp + j * width, *from = dp + (j - 1) * width;
			for (long s = top; s >= r2[i]; s--)
				to[s] += from[s - r2[i]];
		}
	}
	double *dist = xmalloc(width * sizeof(*dist));
	memcpy(dist, dp + k * width, width * sizeof(*dist));
	free(dp);
	*smax = top;
	return dist;
}

int stats_mwu(struct mwu_result *out, const double *x, size_t nx,
	      const double *y, size_t ny)
{
	size_t n = nx + ny;
	long *r2;
	double ties;

	if (!nx || !ny)
		return -EINVAL;
	r2 = xmalloc(n * sizeof(*r2));
	pooled_ranks2(r2, &ties, x, nx, y, ny);
	long w2 = 0;                       /* doubled rank sum of x */
	for (size_t i = 0; i < nx; i++)
		w2 += r2[i];
	/* U = W - nx(nx+1)/2 */
	out->u = (double)w2 / 2 - (double)nx * (double)(nx + 1) / 2;
	long e2 = (long)(nx * (n + 1));    /* doubled E[W] = nx(N+1)/2 */
	long dev = labs(w2 - e2);

	if (nx <= 20 && ny <= 20) {
		long smax;
		double *dist = rank_sum_dist(&smax, r2, n, nx);
		double total = 0, tail = 0;
		for (long s = 0; s <= smax; s++) {
			total += dist[s];
			if (labs(s - e2) >= dev)
				tail += dist[s];
		}
		free(dist);
		out->p = tail / total;
		out->method = MWU_EXACT;
	} else {
		double dn = (double)n;
		double var = (double)nx * (double)ny / 12.0 *
			     ((dn + 1) - ties / (dn * (dn - 1)));
		double mu = (double)nx * (double)ny / 2;
		double d = fabs(out->u - mu) - 0.5;
		if (d < 0)
			d = 0;
		out->p = var > 0 ? 2 * stats_norm_sf(d / sqrt(var)) : 1;
		out->method = MWU_NORMAL;
	}
	if (out->p > 1)
		out->p = 1;
	free(r2);
	return 0;
}

/* One stratum of a van Elteren test: its doubled mid-ranks (x's first),
 * sizes and tie term. */
struct ve_stratum {
	long *r2;
	size_t n, m;
	long w2;          /* doubled rank sum of x */
	double ties;
};

/* A distribution on an integer scale: keys and their probabilities. */
struct ve_dist {
	int64_t *key;
	double *pr;
	size_t n;
};

#define VE_MAX_TERMS 4000000

static int cmp_key_pr(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* d convolved with stratum st's rank-sum distribution scaled by mult.
 * false (d unchanged) when the result would pass VE_MAX_TERMS terms. */
static bool ve_convolve(struct ve_dist *d, const struct ve_stratum *st, int64_t mult)
{
	long smax;
	double *dist = rank_sum_dist(&smax, st->r2, st->n + st->m, st->n);
	double total = 0;
	size_t nz = 0;

	for (long s = 0; s <= smax; s++) {
		total += dist[s];
		nz += dist[s] > 0;
	}
	if (nz * d->n > VE_MAX_TERMS) {
		free(dist);
		return false;
	}
	struct { int64_t key; double pr; } *t = xmalloc(nz * d->n * sizeof(*t));
	size_t k = 0;
	for (size_t i = 0; i < d->n; i++)
		for (long s = 0; s <= smax; s++)
			if (dist[s] > 0) {
				t[k].key = d->key[i] + (int64_t)s * mult;
				t[k++].pr = d->pr[i] * dist[s] / total;
			}
	free(dist);
	qsort(t, k, sizeof(*t), cmp_key_pr);   /* key is the first member */
	size_t out = 0;
	d->key = xrealloc(d->key, k * sizeof(*d->key));
	d->pr = xrealloc(d->pr, k * sizeof(*d->pr));
	for (size_t i = 0; i < k; i++) {
		if (out && d->key[out - 1] == t[i].key) {
			d->pr[out - 1] += t[i].pr;
			continue;
		}
		d->key[out] = t[i].key;
		d->pr[out++] = t[i].pr;
	}
	d->n = out;
	free(t);
	return true;
}

static int64_t gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* The exact two-sided p over the used strata; false when too big. */
static bool ve_exact(double *p, const struct ve_stratum *st, size_t k)
{
	int64_t lcm = 1, obs = 0, e = 0;
	struct ve_dist d = { xmalloc(sizeof(int64_t)), xmalloc(sizeof(double)), 1 };
	bool ok = true;

	for (size_t h = 0; h < k; h++) {
		int64_t q = (int64_t)(st[h].n + st[h].m + 1);
		lcm = lcm / gcd64(lcm, q) * q;
	}
	d.key[0] = 0;
	d.pr[0] = 1;
	for (size_t h = 0; h < k && ok; h++) {
		int64_t mult = lcm / (int64_t)(st[h].n + st[h].m + 1);
		obs += st[h].w2 * mult;
		e += (int64_t)st[h].n * lcm;   /* doubled E[W_h] = n_h (N_h + 1) */
		ok = ve_convolve(&d, &st[h], mult);
	}
	if (ok) {
		int64_t dev = obs > e ? obs - e : e - obs;
		double tail = 0;
		for (size_t i = 0; i < d.n; i++)
			if ((d.key[i] > e ? d.key[i] - e : e - d.key[i]) >= dev)
				tail += d.pr[i];
		*p = tail;
	}
	free(d.key);
	free(d.pr);
	return ok;
}

static double ve_normal(const struct ve_stratum *st, size_t k, double w, double ew)
{
	double var = 0;

	for (size_t h = 0; h < k; h++) {
		double n = (double)st[h].n, m = (double)st[h].m, N = n + m;
		var += n * m / (12 * (N + 1) * (N + 1)) *
		       ((N + 1) - (N > 1 ? st[h].ties / (N * (N - 1)) : 0));
	}
	return var > 0 ? 2 * stats_norm_sf(fabs(w - ew) / sqrt(var)) : 1;
}

/* Stratum h's values of x then y, ranked; false when a side is empty. */
static bool ve_stratum_make(struct ve_stratum *st, size_t h, const double *x, const size_t *sx,
			    size_t nx, const double *y, const size_t *sy, size_t ny)
{
	double *v = xmalloc((nx + ny ? nx + ny : 1) * sizeof(*v));
	size_t n = 0, m = 0;

	for (size_t i = 0; i < nx; i++)
		if (sx[i] == h)
			v[n++] = x[i];
	for (size_t j = 0; j < ny; j++)
		if (sy[j] == h)
			v[n + m++] = y[j];
	if (!n || !m) {
		free(v);
		return false;
	}
	st->n = n;
	st->m = m;
	st->r2 = xmalloc((n + m) * sizeof(*st->r2));
	pooled_ranks2(st->r2, &st->ties, v, n, v + n, m);
	st->w2 = 0;
	for (size_t i = 0; i < n; i++)
		st->w2 += st->r2[i];
	free(v);
	return true;
}

int stats_van_elteren(struct ve_result *out, const double *x, const size_t *sx, size_t nx,
		      const double *y, const size_t *sy, size_t ny, size_t nstrata)
{
	struct ve_stratum *st;
	size_t k = 0;
	bool small = true;
	double w = 0, ew = 0, p;
	int r = 0;

	for (size_t i = 0; i < nx; i++)
		if (sx[i] >= nstrata)
			return -EINVAL;
	for (size_t j = 0; j < ny; j++)
		if (sy[j] >= nstrata)
			return -EINVAL;
	st = xcalloc(nstrata ? nstrata : 1, sizeof(*st));
	for (size_t h = 0; h < nstrata; h++) {
		if (!ve_stratum_make(&st[k], h, x, sx, nx, y, sy, ny))
			continue;
		double q = (double)(st[k].n + st[k].m + 1);
		w += (double)st[k].w2 / 2 / q;
		ew += (double)st[k].n / 2;
		small &= st[k].n + st[k].m <= STATS_VE_EXACT_MAX;
		k++;
	}
	if (!k) {
		r = -EINVAL;
		goto out;
	}
	out->w = w;
	out->expected = ew;
	out->nstrata = k;
	if (small && ve_exact(&p, st, k)) {
		out->method = MWU_EXACT;
	} else {
		p = ve_normal(st, k, w, ew);
		out->method = MWU_NORMAL;
	}
	out->p = p > 1 ? 1 : p;
out:
	for (size_t h = 0; h < k; h++)
		free(st[h].r2);
	free(st);
	return r;
}

double stats_binom(size_t n, size_t k)
{
	double c = 1;
	if (k > n - k)
		k = n - k;
	for (size_t i = 1; i <= k; i++)
		c = c * (double)(n - k + i) / (double)i;
	return c;
}

double stats_mwu_min_p(size_t nx, size_t ny)
{
	if (!nx || !ny)
		return 1;
	double p = 2 / stats_binom(nx + ny, nx);
	return p > 1 ? 1 : p;
}

size_t stats_runs_needed(double alpha)
{
	size_t n = 1;
	while (stats_mwu_min_p(n, n) >= alpha && n < 1000)
		n++;
	return n;
}

/* k-th smallest of v[0..n) (0-based), reordering v: Hoare's quickselect
 * (Hoare 1961, CACM 4(7):321, "Algorithm 65: FIND"), expected O(n). */
static double select_kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		double pivot = v[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				double t = v[i];
				v[i] = v[j];
				v[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return v[k];
	}
	return v[k];
}

/* Median of v[0..n) in O(n), reordering v. */
static double median_select(double *v, size_t n)
{
	double a = select_kth(v, n, n / 2);
	if (n % 2)
		return a;
	/* the lower middle is the largest of the lower half, which select_kth
	 * left in v[0 .. n/2) */
	double b = v[0];
	for (size_t i = 1; i < n / 2; i++)
		if (v[i] > b)
			b = v[i];
	return (a + b) / 2;
}

static double hl_into(double *d, const double *x, size_t nx, const double *y, size_t ny)
{
	size_t k = 0;
	for (size_t i = 0; i < nx; i++)
		for (size_t j = 0; j < ny; j++)
			d[k++] = y[j] - x[i];
	return median_select(d, k);
}

double stats_hodges_lehmann(const double *x, size_t nx, const double *y, size_t ny)
{
	if (!nx || !ny)
		return NAN;
	double *d = xmalloc(nx * ny * sizeof(*d));
	double m = hl_into(d, x, nx, y, ny);
	free(d);
	return m;
}

uint64_t stats_rand64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

double stats_rand01(uint64_t *state)
{
	return (double)(stats_rand64(state) >> 11) * 0x1.0p-53;
}

/* Quantile by linear interpolation between order statistics (Hyndman &
 * Fan 1996, definition 7, the default of R and numpy). */
static double quantile_sorted(const double *s, size_t n, double q)
{
	double h = (double)(n - 1) * q;
	size_t lo = (size_t)floor(h);
	size_t hi = lo + 1 < n ? lo + 1 : lo;
	return s[lo] + (h - (double)lo) * (s[hi] - s[lo]);
}

unsigned stats_bootstrap_resamples(unsigned b, size_t nx, size_t ny)
{
	double work = (double)nx * (double)ny;
	if (work * b <= STATS_BOOTSTRAP_WORK)
		return b;
	double fit = STATS_BOOTSTRAP_WORK / work;
	return fit < 200 ? 200 : (unsigned)fit;
}

void stats_hl_bootstrap_ci(double *lo, double *hi, const double *x, size_t nx,
			   const double *y, size_t ny, unsigned b, double alpha,
			   uint64_t seed)
{
	if (!nx || !ny || !b) {
		*lo = *hi = NAN;
		return;
	}
	b = stats_bootstrap_resamples(b, nx, ny);
	double *bx = xmalloc(nx * sizeof(*bx)), *by = xmalloc(ny * sizeof(*by));
	double *d = xmalloc(nx * ny * sizeof(*d));
	double *shift = xmalloc(b * sizeof(*shift));
	uint64_t st = seed;

	for (unsigned i = 0; i < b; i++) {
		for (size_t j = 0; j < nx; j++)
			bx[j] = x[stats_rand64(&st) % nx];
		for (size_t j = 0; j < ny; j++)
			by[j] = y[stats_rand64(&st) % ny];
		shift[i] = hl_into(d, bx, nx, by, ny);
	}
	qsort(shift, b, sizeof(*shift), cmp_double);
	*lo = quantile_sorted(shift, b, alpha / 2);
	*hi = quantile_sorted(shift, b, 1 - alpha / 2);
	free(bx);
	free(by);
	free(d);
	free(shift);
}

static double contrast(const double *v, const size_t n[4])
{
	double m[4];
	size_t o = 0;
	for (int c = 0; c < 4; c++) {
		double sum = 0;
		for (size_t i = 0; i < n[c]; i++)
			sum += v[o + i];
		m[c] = sum / (double)n[c];
		o += n[c];
	}
	return (m[3] - m[2]) - (m[1] - m[0]);
}

int stats_interaction_perm(double *p, double *t, const double *const x[4], const size_t n[4],
			   unsigned nperm, uint64_t seed)
{
	size_t total = 0;
	double m[4];

	for (int c = 0; c < 4; c++) {
		if (!n[c])
			return -EINVAL;
		m[c] = stats_mean(x[c], n[c]);
		total += n[c];
	}
	if (total < 5)
		return -EINVAL;   /* one value per cell: nothing to permute */
	double *e = malloc(total * sizeof(*e));
	if (!e)
		return -ENOMEM;
	/* cells 0..3 are (row, col) = (0,0), (1,0), (0,1), (1,1) */
	double g = (m[0] + m[1] + m[2] + m[3]) / 4;
	double row[2] = { (m[0] + m[2]) / 2, (m[1] + m[3]) / 2 };
	double col[2] = { (m[0] + m[1]) / 2, (m[2] + m[3]) / 2 };
	size_t o = 0;
	for (int c = 0; c < 4; c++)
		for (size_t i = 0; i < n[c]; i++)
			e[o++] = x[c][i] - (row[c & 1] + col[c >> 1] - g);
	double obs = contrast(e, n);   /* the same as on the values themselves */
	uint64_t st = seed;
	unsigned ge = 0;
	for (unsigned k = 0; k < nperm; k++) {
		for (size_t i = total; i > 1; i--) {   /* Fisher-Yates */
			size_t j = (size_t)(stats_rand64(&st) % i);
			double tmp = e[i - 1];
			e[i - 1] = e[j];
			e[j] = tmp;
		}
		/* a tolerance, so that permutations equal to the observed
		 * arrangement count despite rounding */
		if (fabs(contrast(e, n)) >= fabs(obs) * (1 - 1e-12))
			ge++;
	}
	free(e);
	*t = (m[3] - m[2]) - (m[1] - m[0]);
	*p = (1.0 + ge) / (1.0 + nperm);
	return 0;
}

/* ---- sequential two-sample tests (stats.h) ---- */

double stats_seq_tf(double x)
{
	return x < 0 ? -log1p(-x) : log1p(x);
}

double stats_seq_tf_inv(double t)
{
	return t < 0 ? -expm1(-t) : expm1(t);
}

/* Means of t(x), t(y) and the pooled within sum of squares: the order of
 * operations is bisect.c's former endpoint_evalue(), so its figures stay. */
static void seq_moments(double *mx, double *my, double *ss, const double *x, size_t n,
			const double *y, size_t m)
{
	*mx = *my = *ss = 0;
	for (size_t i = 0; i < n; i++)
		*mx += stats_seq_tf(x[i]) / (double)n;
	for (size_t i = 0; i < m; i++)
		*my += stats_seq_tf(y[i]) / (double)m;
	for (size_t i = 0; i < n; i++)
		*ss += (stats_seq_tf(x[i]) - *mx) * (stats_seq_tf(x[i]) - *mx);
	for (size_t i = 0; i < m; i++)
		*ss += (stats_seq_tf(y[i]) - *my) * (stats_seq_tf(y[i]) - *my);
}

double stats_seq_evalue_max(size_t n, size_t m, double g)
{
	double nu = (double)(n + m) - 2, nd = (double)n * (double)m / (double)(n + m);

	if (n < 2 || m < 2)
		return 1;
	return pow(1 + nd * g, nu / 2);
}

double stats_seq_evalue(const double *x, size_t n, const double *y, size_t m,
			double shift, double g)
{
	double mx, my, ss, nu = (double)(n + m) - 2;
	double nd = (double)n * (double)m / (double)(n + m), t2;

	if (n < 2 || m < 2)
		return 1;
	seq_moments(&mx, &my, &ss, x, n, y, m);
	my -= shift;
	if (ss <= 0)	/* both sides constant: all or nothing */
		return mx == my ? 1 : pow(1 + nd * g, nu / 2);
	t2 = (my - mx) * (my - mx) / (ss / nu * (1 / (double)n + 1 / (double)m));
	return pow(1 + nd * g, -0.5) *
	       pow((1 + t2 / nu) / (1 + t2 / (nu * (1 + nd * g))), (nu + 1) / 2);
}

void stats_seq_cs(double *lo, double *hi, const double *x, size_t n, const double *y,
		  size_t m, double g, double alpha)
{
	double mx, my, ss, nu = (double)(n + m) - 2;
	double nd = (double)n * (double)m / (double)(n + m), a = 1 + nd * g, k, u, se;

	*lo = -INFINITY;
	*hi = INFINITY;
	if (n < 2 || m < 2)
		return;
	k = pow(sqrt(a) / alpha, 2 / (nu + 1));
	if (k >= a)
		return;
	seq_moments(&mx, &my, &ss, x, n, y, m);
	u = (k - 1) / (1 - k / a);
	se = sqrt(ss / nu * (1 / (double)n + 1 / (double)m));
	*lo = my - mx - sqrt(u * nu) * se;
	*hi = my - mx + sqrt(u * nu) * se;
}

/* The shift s of t-space as % of the baseline median M on the raw scale. */
static double seq_pct(double med, double s)
{
	double d;

	if (isinf(s))
		return s;
	d = stats_seq_tf_inv(stats_seq_tf(med) + s) - med;
	if (med == 0)
		return d == 0 ? 0 : NAN;
	return d / fabs(med) * 100;
}

void stats_seq_decide(struct stats_seq_look *out, const double *x, size_t n,
		      const double *y, size_t m, double g, double alpha, double margin)
{
	double lo, hi, med = stats_median(x, n);

	memset(out, 0, sizeof(*out));
	out->threshold = 1 / alpha;
	out->evalue = stats_seq_evalue(x, n, y, m, 0, g);
	stats_seq_cs(&lo, &hi, x, n, y, m, g, alpha);
	out->lo_pct = n ? seq_pct(med, lo) : -INFINITY;
	out->hi_pct = n ? seq_pct(med, hi) : INFINITY;
	if (out->evalue >= out->threshold)
		out->decision = STATS_SEQ_DIFFERENT;
	else if (n && !isinf(lo) && !isinf(hi) &&
		 stats_seq_tf_inv(stats_seq_tf(med) + lo) >= med - margin * fabs(med) &&
		 stats_seq_tf_inv(stats_seq_tf(med) + hi) <= med + margin * fabs(med))
		out->decision = STATS_SEQ_EQUIVALENT;
}
