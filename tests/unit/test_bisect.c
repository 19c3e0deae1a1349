/* test_bisect.c - the bisection engine driven by a scripted oracle: clean
 * and flaky histories, skips next to the culprit, endpoints that do not
 * differ, --find-fix, log replay, and the simulator's determinism. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "judge/bisect.h"
#include "judge/bisect_sim.h"
#include "util.h"

#define N 64
#define CULPRIT 40

/*
 * A scripted history: commit i is "new" when i >= culprit. Values are
 * worst lag in seconds, picked by the commit's run counter k, so every
 * answer is fixed by (commit, k) and the test is deterministic.
 */
struct script {
	size_t n, culprit;
	bool find_fix;		/* old side bad, new side good */
	bool flaky;		/* bad runs stall in 7 of 9 */
	bool same;		/* no change at all: everything good */
	const size_t *skips;	/* commits that never build */
	size_t nskips;
	unsigned runs[N];
	unsigned calls;
	unsigned lie_after;	/* > 0: after this many calls the culprit runs good */
	unsigned skip_after;	/* > 0: after this many calls the culprit and its
				 * parent skip (the check's builds fail) */
};

static const double good_v[5] = { 1.1, 1.3, 1.0, 1.5, 1.2 };
static const double bad_v[5] = { 45.0, 22.0, 80.0, 13.0, 30.0 };
static const double stall_v[9] = { 19.0, 21.0, 23.0, 25.0, 1.5, 26.0, 20.0, 24.0, 1.4 };

static int scripted(void *ctx, size_t idx, double *value_out)
{
	struct script *s = ctx;
	unsigned k;
	bool bad;

	assert_true(idx < s->n);
	s->calls++;
	for (size_t i = 0; i < s->nskips; i++)
		if (s->skips[i] == idx)
			return -ENOEXEC;
	if (s->skip_after && s->calls > s->skip_after &&
	    (idx == s->culprit || idx + 1 == s->culprit))
		return -EIO;
	k = s->runs[idx]++;
	bad = !s->same && ((idx >= s->culprit) != s->find_fix);
	if (s->lie_after && s->calls > s->lie_after && idx == s->culprit)
		bad = false;
	if (!bad)
		*value_out = good_v[(k + idx) % 5];
	else if (s->flaky)
		/* fast (1.5 s / 1.4 s) when (k + idx) % 9 is 4 or 8: 7 of 9 stall */
		*value_out = stall_v[(k + idx) % 9];
	else
		*value_out = bad_v[(k + idx) % 5];
	return 0;
}

static void script_init(struct script *s)
{
	memset(s, 0, sizeof(*s));
	s->n = N;
	s->culprit = CULPRIT;
}

/* What a `git bisect run` user does on the flaky history: binary search,
 * one run per step, no check. Returns bisect_run()'s status. */
static int git_bisect_flaky(struct bisect_result *r, struct script *s, struct bisect_opts *o)
{
	script_init(s);
	s->flaky = true;
	bisect_opts_init(o);
	o->strategy = BISECT_BINARY;
	o->fixed_repeats = 1;
	o->check_runs = 0;
	return bisect_run(r, N, o, scripted, s, NULL, NULL);
}

static void test_clean_history_all_strategies(void **state)
{
	(void)state;
	for (int strat = 0; strat < 3; strat++) {
		struct script s;
		struct bisect_opts o;
		struct bisect_result r;
		enum bisect_verdict v[N];

		script_init(&s);
		bisect_opts_init(&o);
		o.strategy = strat == 0 ? BISECT_PROBABILISTIC : BISECT_BINARY;
		o.fixed_repeats = strat == 2 ? 1 : 0;
		assert_int_equal(bisect_run(&r, N, &o, scripted, &s, NULL, v), 0);
		assert_int_equal(r.outcome, BISECT_FOUND);
		assert_int_equal(r.culprit_first, CULPRIT);
		assert_int_equal(r.culprit_last, CULPRIT);
		/* only the probabilistic strategy runs until the posterior
		 * reaches 0.95; one run per step with one run per endpoint
		 * is weak evidence, and the posterior says so */
		if (strat == 0) {
			assert_true(r.culprit_prob >= 0.95);
			assert_int_equal(r.top[0].first, CULPRIT);
		} else if (strat == 1) {
			assert_true(r.culprit_prob >= 0.5);
		} else {
			assert_true(r.culprit_prob > 0 && r.culprit_prob < 0.5);
		}
		/* every tested commit got the verdict of its side */
		for (size_t i = 0; i < N; i++) {
			if (v[i] == BISECT_UNTESTED)
				continue;
			assert_int_equal(v[i], i >= CULPRIT ? BISECT_BAD : BISECT_GOOD);
		}
		assert_int_equal(v[CULPRIT], BISECT_BAD);
		assert_int_equal(v[CULPRIT - 1], BISECT_GOOD);
		/* culprit check: parent vs culprit, interleaved, and it passes */
		assert_true(r.check_done);
		assert_true(r.check_passed);
		assert_int_equal(r.check_parent, CULPRIT - 1);
		assert_int_equal(r.check_culprit, CULPRIT);
		assert_true(r.check_median_culprit > 10 && r.check_median_parent < 2);
		assert_true(r.check_shift > 10);
		assert_int_equal(r.runs_total, s.calls);
		/* 64 commits are 6 bits: far fewer runs than 64 */
		assert_true(r.runs_total - r.runs_check <= 40);
		/* perfectly separated ends stop early on the e-value (issue 19;
		 * 5 vs 5 before it): at 3 or 4 runs a side, exact p = 2/C(2n,n) */
		if (strat == 2) {
			assert_int_equal(r.endpoint_runs_old, 1);
		} else {
			unsigned ne = r.endpoint_runs_old;
			assert_true(ne >= 3 && ne <= 4);
			assert_int_equal(r.endpoint_runs_new, ne);
			assert_true(r.endpoint_evalue >= 100);
			assert_true(fabs(r.endpoint_p - (ne == 3 ? 2.0 / 20 : 2.0 / 70)) < 1e-12);
		}
	}
}

static void test_flaky_history(void **state)
{
	struct script s;
	struct bisect_opts o;
	struct bisect_result r;

	(void)state;
	/* git bisect run with one run per step: commit 40's first run is one
	 * of its fast ones (1.5 s), so it is called good and 41 is blamed */
	assert_int_equal(git_bisect_flaky(&r, &s, &o), 0);
	assert_int_equal(r.outcome, BISECT_FOUND);
	assert_int_equal(r.culprit_first, CULPRIT + 1);

	/* probabilistic bisection finds the right one and is sure of it */
	script_init(&s);
	s.flaky = true;
	bisect_opts_init(&o);
	assert_int_equal(bisect_run(&r, N, &o, scripted, &s, NULL, NULL), 0);
	assert_int_equal(r.outcome, BISECT_FOUND);
	assert_int_equal(r.culprit_first, CULPRIT);
	assert_true(r.culprit_prob >= 0.95);
	assert_true(r.check_done && r.check_passed);
	assert_true(r.check_p <= 0.05);

	/* adaptive repeats too: an unsure commit gets more runs */
	script_init(&s);
	s.flaky = true;
	o.strategy = BISECT_BINARY;
	assert_int_equal(bisect_run(&r, N, &o, scripted, &s, NULL, NULL), 0);
	assert_int_equal(r.culprit_first, CULPRIT);
	assert_true(s.runs[CULPRIT] > 1);
}

static void test_skips_next_to_culprit_give_a_range(void **state)
{
	static const size_t skips[] = { 39, 40, 41 };

	(void)state;
	for (int strat = 0; strat < 2; strat++) {
		struct script s;
		struct bisect_opts o;
		struct bisect_result r;
		enum bisect_verdict v[N];

		script_init(&s);
		s.skips = skips;
		s.nskips = 3;
		bisect_opts_init(&o);
		o.strategy = strat ? BISECT_BINARY : BISECT_PROBABILISTIC;
		assert_int_equal(bisect_run(&r, N, &o, scripted, &s, NULL, v), 0);
		/* commits 39..41 cannot be told apart: the culprit is one of 39..42 */
		assert_int_equal(r.outcome, BISECT_RANGE);
		assert_int_equal(r.culprit_first, 39);
		assert_int_equal(r.culprit_last, 42);
		assert_non_null(strstr(r.message, "range"));
		assert_non_null(strstr(r.message, "39..41 could not be tested"));
		/* skips are never evidence: each skipped commit asked once */
		assert_true(r.skips >= 1 && r.skips <= 3);
		for (size_t i = 0; i < 3; i++)
			if (v[skips[i]] != BISECT_UNTESTED)
				assert_int_equal(v[skips[i]], BISECT_SKIP);
		assert_int_equal(v[38], BISECT_GOOD);
		assert_int_equal(v[42], BISECT_BAD);
		assert_true(r.check_done && r.check_passed);
		assert_int_equal(r.check_parent, 38);
		assert_int_equal(r.check_culprit, 42);
	}
}

static void test_endpoints_that_do_not_differ(void **state)
{
	struct script s;
	struct bisect_opts o;
	struct bisect_result r;

	(void)state;
	script_init(&s);
	s.same = true;
	bisect_opts_init(&o);
	assert_int_equal(bisect_run(&r, N, &o, scripted, &s, NULL, NULL), 0);
	assert_int_equal(r.outcome, BISECT_NO_DIFFERENCE);
	assert_non_null(strstr(r.message, "endpoints do not differ"));
	/* only the endpoints were measured, within the cap */
	assert_int_equal(s.runs[0] + s.runs[N - 1], s.calls);
	assert_true(r.runs_total <= 2 * o.endpoint_max_runs);
	assert_true(r.endpoint_p > 0.01);
}

static void test_find_fix(void **state)
{
	struct script s;
	struct bisect_opts o;
	struct bisect_result r;
	enum bisect_verdict v[N];

	(void)state;
	/* the stall goes away at commit 25 */
	script_init(&s);
	s.culprit = 25;
	s.find_fix = true;
	bisect_opts_init(&o);
	o.find_fix = true;
	assert_int_equal(bisect_run(&r, N, &o, scripted, &s, NULL, v), 0);
	assert_int_equal(r.outcome, BISECT_FOUND);
	assert_int_equal(r.culprit_first, 25);
	assert_int_equal(v[25], BISECT_GOOD);
	assert_int_equal(v[0], BISECT_BAD);
	assert_non_null(strstr(r.message, "first fixed commit: 25"));
	assert_true(r.check_done && r.check_passed);
	assert_true(r.check_median_culprit < r.check_median_parent);

	/* the same history without --find-fix: the endpoints differ the
	 * wrong way round, and we say so instead of bisecting */
	memset(s.runs, 0, sizeof(s.runs));
	o.find_fix = false;
	assert_int_equal(bisect_run(&r, N, &o, scripted, &s, NULL, NULL), 0);
	assert_int_equal(r.outcome, BISECT_WRONG_DIRECTION);
	assert_non_null(strstr(r.message, "--find-fix"));
}

/* A log written before the good side's sharp share (issue 19 item 2) has
 * no sharp_good key: it replays with Laplace's share on both sides, the
 * engine that wrote it; with the key it replays the sharp share. */
static void test_replay_of_logs_before_the_sharp_share(void **state)
{
	(void)state;
	for (int sharp = 0; sharp < 2; sharp++) {
		struct script s;
		struct bisect_opts o;
		struct bisect_result r, rr;
		struct buf log = BUF_INIT, err = BUF_INIT;
		char *text, *key;

		script_init(&s);
		s.flaky = true;
		bisect_opts_init(&o);
		o.sharp_good = sharp;
		assert_int_equal(bisect_run(&r, N, &o, scripted, &s, &log, NULL), 0);
		text = xstrdup(buf_str(&log));
		key = strstr(text, sharp ? " sharp_good=1" : " sharp_good=0");
		assert_non_null(key);
		if (!sharp)	/* the old log's config line: no key at all */
			memmove(key, key + 13, strlen(key + 13) + 1);
		assert_int_equal(bisect_replay(&rr, text, NULL, &err), 0);
		assert_int_equal(rr.culprit_first, r.culprit_first);
		assert_int_equal(rr.runs_total, r.runs_total);
		/* the other engine asks for other commits: the replay says so */
		if (!sharp) {
			char *on = xstrdup(buf_str(&log));

			memcpy(strstr(on, " sharp_good=0"), " sharp_good=1", 13);
			assert_int_equal(bisect_replay(&rr, on, NULL, &err), -EPROTO);
			free(on);
		}
		free(text);
		buf_release(&log);
		buf_release(&err);
	}
}

static void test_replay_reproduces(void **state)
{
	static const size_t skips[] = { 20 };
	struct script s;
	struct bisect_opts o;
	struct bisect_result r, rr;
	struct buf log = BUF_INIT, relog = BUF_INIT, line = BUF_INIT;
	char *text, *p;
	struct buf err = BUF_INIT;


	(void)state;
	script_init(&s);
	s.flaky = true;
	s.skips = skips;
	s.nskips = 1;
	bisect_opts_init(&o);
	assert_int_equal(bisect_run(&r, N, &o, scripted, &s, &log, NULL), 0);
	assert_non_null(strstr(buf_str(&log), "kcanary-bisect-log 1\nconfig n=64 "));
	assert_non_null(strstr(buf_str(&log), "\nposterior "));

	/* replay: same result, same log, no oracle */
	assert_int_equal(bisect_replay(&rr, buf_str(&log), &relog, &err), 0);
	assert_int_equal(err.len, 0);
	assert_string_equal(buf_str(&relog), buf_str(&log));
	bisect_result_line(&line, &rr);
	assert_non_null(strstr(buf_str(&log), buf_str(&line)));
	assert_int_equal(rr.culprit_first, r.culprit_first);
	assert_int_equal(rr.runs_total, r.runs_total);

	/* the table of tested commits: the culprit bad, its parent good, the
	 * skipped commit shown as such */
	{
		struct buf t = BUF_INIT;
		char want[64];

		assert_int_equal(bisect_log_table(&t, buf_str(&log)), 0);
		snprintf(want, sizeof(want), "\n%8d %5u %-9s", CULPRIT, s.runs[CULPRIT], "bad");
		assert_non_null(strstr(buf_str(&t), want));
		snprintf(want, sizeof(want), "\n%8d %5u %-9s", CULPRIT - 1, s.runs[CULPRIT - 1],
			 "good");
		assert_non_null(strstr(buf_str(&t), want));
		if (s.calls > r.runs_total) {	/* commit 20 was asked for */
			assert_non_null(strstr(buf_str(&t), "\n      20     0 skip      (1 skip)"));
		}
		buf_release(&t);
		assert_int_equal(bisect_log_table(&t, "nothing\n"), -EINVAL);
		buf_release(&t);
	}

	/* a changed value sends the replay elsewhere: detected */
	{
		const char *lg = buf_str(&log), *v = strstr(lg, "phase=search value=");
		size_t vlen;
		struct buf t = BUF_INIT;

		assert_non_null(v);
		v += strlen("phase=search value=");
		vlen = strcspn(v, "\n");
		buf_append(&t, lg, (size_t)(v - lg));
		/* a fast run becomes a stall, a stall a fast run */
		buf_puts(&t, strtod(v, NULL) > 5 ? "1.05" : "55");
		buf_puts(&t, v + vlen);
		assert_int_equal(bisect_replay(&rr, buf_str(&t), NULL, &err), -EPROTO);
		assert_true(err.len > 0);
		buf_reset(&err);
		buf_release(&t);
	}

	/* a log cut short */
	text = xstrdup(buf_str(&log));
	p = strstr(text, "phase=check");
	assert_non_null(p);
	*p = 0;
	p = strrchr(text, '\n');
	p[1] = 0;
	assert_int_equal(bisect_replay(&rr, text, NULL, &err), -ENODATA);
	buf_reset(&err);
	free(text);

	/* not a log */
	assert_int_equal(bisect_replay(&rr, "hello\n", NULL, &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "kcanary-bisect-log 1"));
	buf_release(&err);

	buf_release(&log);
	buf_release(&relog);
	buf_release(&line);
}

static void test_culprit_failing_the_check_is_reported(void **state)
{
	struct script s;
	struct bisect_opts o;
	struct bisect_result r;
	unsigned search_calls;

	(void)state;
	script_init(&s);
	bisect_opts_init(&o);
	assert_int_equal(bisect_run(&r, N, &o, scripted, &s, NULL, NULL), 0);
	assert_true(r.check_passed);
	search_calls = r.runs_total - r.runs_check;

	/* same history, but when re-run for the check the culprit no longer
	 * stalls (an intermittent culprit, or a wrong one): not a result */
	script_init(&s);
	s.lie_after = search_calls;
	assert_int_equal(bisect_run(&r, N, &o, scripted, &s, NULL, NULL), 0);
	assert_int_equal(r.culprit_first, CULPRIT);
	assert_true(r.check_done);
	assert_false(r.check_passed);
	assert_true(r.check_p > 0.05);
	assert_non_null(strstr(r.message, "culprit check FAILED"));
	assert_non_null(strstr(r.message, "not a result"));
	/* unsure comparisons get more check runs, up to twice check_runs */
	assert_true(r.check_n_culprit > o.check_runs);
	assert_true(r.check_n_culprit <= 2 * o.check_runs);
}

static void test_budget_spent_gives_candidates(void **state)
{
	struct script s;
	struct bisect_opts o;
	struct bisect_result r;

	(void)state;
	script_init(&s);
	s.flaky = true;
	bisect_opts_init(&o);
	o.max_runs = 14;	/* 10+ go to the endpoints */
	assert_int_equal(bisect_run(&r, N, &o, scripted, &s, NULL, NULL), 0);
	assert_int_equal(r.outcome, BISECT_UNDECIDED);
	assert_true(r.runs_total <= 14 + 1);
	assert_false(r.check_done);	/* no culprit, nothing to check */
	assert_non_null(strstr(r.message, "budget"));
	/* the best guesses, with probabilities, best first, summing below 1 */
	assert_true(r.ntop == BISECT_TOP);
	double sum = 0;

	for (size_t i = 0; i < r.ntop; i++) {
		sum += r.top[i].prob;
		if (i)
			assert_true(r.top[i].prob <= r.top[i - 1].prob);
	}
	assert_true(sum < 1 && r.culprit_prob < 0.95);
	assert_int_equal(r.culprit_first, r.top[0].first);
}

static void test_bad_options(void **state)
{
	struct script s;
	struct bisect_opts o;
	struct bisect_result r;

	(void)state;
	script_init(&s);
	bisect_opts_init(&o);
	assert_int_equal(bisect_run(&r, 1, &o, scripted, &s, NULL, NULL), -EINVAL);
	o.confidence = 1.0;
	assert_int_equal(bisect_run(&r, N, &o, scripted, &s, NULL, NULL), -EINVAL);
	/* no "no difference" without power (issue 19): 2 runs a side can never
	 * show a difference (Mann-Whitney at best 0.33, the e-value at most
	 * 51 < 100), so such a cap is refused rather than run (it ran, and
	 * said "endpoints do not differ"); 3 a side can (e-value up to 5776) */
	bisect_opts_init(&o);
	o.endpoint_min_runs = o.endpoint_max_runs = 2;
	assert_int_equal(bisect_run(&r, N, &o, scripted, &s, NULL, NULL), -EINVAL);
	assert_int_equal(s.calls, 0);
	o.endpoint_min_runs = o.endpoint_max_runs = 3;
	s.same = true;	/* every commit the same: nothing to find */
	assert_int_equal(bisect_run(&r, N, &o, scripted, &s, NULL, NULL), 0);
	assert_int_equal(r.outcome, BISECT_NO_DIFFERENCE);
}

static void test_simulator_is_deterministic_and_beats_fixed(void **state)
{
	struct bisect_sim_opts so = { .commits = 300, .trials = 60, .seed = 42,
				      .history = SIM_FLAKY };
	struct bisect_sim_stats a, b, git;
	struct bisect_opts o;

	(void)state;
	bisect_opts_init(&o);
	o.check_runs = 0;
	assert_int_equal(bisect_sim_run(&a, &so, &o), 0);
	assert_int_equal(bisect_sim_run(&b, &so, &o), 0);
	assert_int_equal(a.correct, b.correct);
	assert_int_equal(a.confident, b.confident);
	assert_int_equal(a.runs_max, b.runs_max);
	assert_true(a.runs_sum == b.runs_sum);
	o.strategy = BISECT_BINARY;
	o.fixed_repeats = 1;
	assert_int_equal(bisect_sim_run(&git, &so, &o), 0);
	/* on "stalled in 7 of 9" one run per step is mostly wrong;
	 * the probabilistic bisection mostly right */
	assert_true(git.correct < so.trials / 2);
	assert_true(a.correct >= so.trials * 9 / 10);
	/* skips in the simulated history are reported, never evidence */
	so.skip_rate = 0.1;
	o = (struct bisect_opts){ 0 };
	bisect_opts_init(&o);
	assert_int_equal(bisect_sim_run(&a, &so, &o), 0);
	assert_true(a.correct + a.in_range >= so.trials * 8 / 10);
}

/* A binary search's FOUND is "converged", not "confident": with one run
 * per step on a flaky history it converges on a commit the posterior does
 * not hold at the confidence, and says so with the posterior's p. */
static void test_binary_found_means_converged(void **state)
{
	struct bisect_sim_opts so = { .commits = 300, .trials = 40, .seed = 7,
				      .history = SIM_FLAKY };
	struct bisect_sim_stats st;
	struct script s;
	struct bisect_opts o;
	struct bisect_result r;
	char want[64];

	(void)state;
	assert_int_equal(git_bisect_flaky(&r, &s, &o), 0);
	assert_int_equal(r.outcome, BISECT_FOUND);
	assert_non_null(strstr(r.message, "binary search converged"));
	snprintf(want, sizeof(want), "posterior p = %.3f", r.culprit_prob);
	assert_non_null(strstr(r.message, want));
	if (r.culprit_prob < o.confidence)
		assert_non_null(strstr(r.message, "below the confidence"));

	/* simulate's "confident" column comes from the posterior: git bisect
	 * run on "7 of 9" always converges (outcome FOUND every trial) but is
	 * confident in few of them */
	assert_int_equal(bisect_sim_run(&st, &so, &o), 0);
	assert_int_equal(st.stopped, 0);
	assert_true(st.confident < so.trials / 2);
	assert_true(st.correct < so.trials / 2);
}

static void test_check_runs_minimum(void **state)
{
	struct script s;
	struct bisect_opts o;
	struct bisect_result r;

	(void)state;
	/* 2 against 2 runs: Mann-Whitney p >= 1/3; grown to 4 against 4 the
	 * check can reach p = 0.029 */
	assert_int_equal(bisect_check_runs_min(), 2);
	script_init(&s);
	bisect_opts_init(&o);
	o.check_runs = 1;
	assert_int_equal(bisect_run(&r, N, &o, scripted, &s, NULL, NULL), -EINVAL);
	assert_int_equal(s.calls, 0);
	o.check_runs = 2;
	assert_int_equal(bisect_run(&r, N, &o, scripted, &s, NULL, NULL), 0);
	assert_int_equal(r.culprit_first, CULPRIT);
	assert_true(r.check_done && r.check_passed);
	assert_int_equal(r.check_n_parent, 4);
}

static void test_check_abandoned_for_skips_is_reported(void **state)
{
	struct script s;
	struct bisect_opts o;
	struct bisect_result r;
	struct buf log = BUF_INIT, line = BUF_INIT;
	unsigned search_calls;
	char want[96];

	(void)state;
	script_init(&s);
	bisect_opts_init(&o);
	assert_int_equal(bisect_run(&r, N, &o, scripted, &s, NULL, NULL), 0);
	search_calls = r.runs_total - r.runs_check;
	/* the same history, but the check's builds of culprit and parent fail */
	script_init(&s);
	s.skip_after = search_calls;
	assert_int_equal(bisect_run(&r, N, &o, scripted, &s, &log, NULL), 0);
	assert_int_equal(r.outcome, BISECT_FOUND);
	assert_false(r.check_done);
	assert_true(r.check_abandoned);
	assert_int_equal(r.check_attempts, 8 * o.check_runs);
	assert_int_equal(r.check_skips, r.check_attempts);
	snprintf(want, sizeof(want), "culprit check not run: %u of %u runs skipped",
		 r.check_skips, r.check_attempts);
	assert_non_null(strstr(r.message, want));
	bisect_result_line(&line, &r);
	assert_non_null(strstr(buf_str(&line), " check=not-run check_skips=40 check_attempts=40"));
	assert_non_null(strstr(buf_str(&log), buf_str(&line)));
	buf_release(&log);
	buf_release(&line);
}

static void test_budget_spent_without_a_likely_commit(void **state)
{
	struct script s;
	struct bisect_opts o;
	struct bisect_result r;

	(void)state;
	script_init(&s);
	s.flaky = true;
	bisect_opts_init(&o);
	o.max_runs = 11;	/* the endpoints and a run or two: nearly flat */
	assert_int_equal(bisect_run(&r, N, &o, scripted, &s, NULL, NULL), 0);
	assert_int_equal(r.outcome, BISECT_UNDECIDED);
	assert_true(r.culprit_prob < BISECT_LIKELY);
	assert_null(strstr(r.message, "best guess"));
	assert_non_null(strstr(r.message, "no commit is likely"));
	/* the top candidates, with their probabilities */
	char want[64];

	snprintf(want, sizeof(want), " %zu (p = %.3f)", r.top[0].first, r.top[0].prob);
	assert_non_null(strstr(r.message, want));
}

static void test_find_fix_no_difference_names_its_probability(void **state)
{
	struct script s;
	struct bisect_opts o;
	struct bisect_result r;
	struct buf log = BUF_INIT, t = BUF_INIT;
	char want[96];

	(void)state;
	script_init(&s);
	s.same = true;
	bisect_opts_init(&o);
	o.find_fix = true;
	assert_int_equal(bisect_run(&r, N, &o, scripted, &s, &log, NULL), 0);
	assert_int_equal(r.outcome, BISECT_NO_DIFFERENCE);
	/* the number is P(new worse): it is labelled so, under --find-fix too */
	snprintf(want, sizeof(want), "P(a new-end run worse than an old-end run) = %.2f",
		 r.endpoint_effect);
	assert_non_null(strstr(r.message, want));
	assert_null(strstr(r.message, "P(old worse)"));
	/* endpoints just found not to differ are neither good nor bad */
	assert_int_equal(bisect_log_table(&t, buf_str(&log)), 0);
	snprintf(want, sizeof(want), "\n%8d %5u %-9s", 0, s.runs[0], "old");
	assert_non_null(strstr(buf_str(&t), want));
	snprintf(want, sizeof(want), "\n%8d %5u %-9s", N - 1, s.runs[N - 1], "new");
	assert_non_null(strstr(buf_str(&t), want));
	assert_null(strstr(buf_str(&t), " good "));
	assert_null(strstr(buf_str(&t), " bad "));
	buf_release(&log);
	buf_release(&t);
}

/* Replay compares the final verdicts too; the table names candidates and
 * calls an endpoint that only skipped "skip", as the run does. */
static void test_replay_final_verdicts_and_table(void **state)
{
	static const size_t skips[] = { N - 1 };
	struct script s;
	struct bisect_opts o;
	struct bisect_result r, rr;
	struct buf log = BUF_INIT, t = BUF_INIT, named = BUF_INIT;
	char *text;
	struct buf err = BUF_INIT;

	(void)state;
	script_init(&s);
	bisect_opts_init(&o);
	assert_int_equal(bisect_run(&r, N, &o, scripted, &s, &log, NULL), 0);
	/* the culprit's final verdict swapped, the result line untouched */
	{
		const char *lg = buf_str(&log), *q;
		char want[64];

		snprintf(want, sizeof(want), "verdict idx=%d final=1", CULPRIT);
		q = strstr(lg, want);
		assert_non_null(q);
		q = strstr(q, "verdict=bad\n");
		assert_non_null(q);
		buf_append(&t, lg, (size_t)(q - lg));
		buf_puts(&t, "verdict=good\n");
		buf_puts(&t, q + strlen("verdict=bad\n"));
		text = buf_detach(&t);
	}
	assert_int_equal(bisect_replay(&rr, text, NULL, &err), -EPROTO);
	assert_non_null(strstr(buf_str(&err), "final verdicts"));
	buf_release(&err);
	free(text);

	/* names from '# candidate' lines */
	buf_puts(&named, "# candidate 0 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa aaaaaaaaaaaa first one\n");
	buf_printf(&named, "# candidate %d bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb bbbbbbbbbbbb "
		   "writeback: the culprit\n", CULPRIT);
	buf_puts(&named, buf_str(&log));
	assert_int_equal(bisect_log_table(&t, buf_str(&named)), 0);
	assert_non_null(strstr(buf_str(&t), " candidate "));
	assert_non_null(strstr(buf_str(&t), " bad       bbbbbbbbbbbb writeback: the culprit "));
	assert_non_null(strstr(buf_str(&t), " good      aaaaaaaaaaaa first one "));
	buf_release(&t);
	buf_release(&log);

	/* an endpoint that cannot be measured: "skip", not "untested" */
	script_init(&s);
	s.skips = skips;
	s.nskips = 1;
	assert_int_equal(bisect_run(&r, N, &o, scripted, &s, &log, NULL), 0);
	assert_int_equal(r.outcome, BISECT_ENDPOINT_SKIP);
	assert_int_equal(bisect_log_table(&t, buf_str(&log)), 0);
	assert_non_null(strstr(buf_str(&t), "\n      63     0 skip      (1 skip)"));
	assert_null(strstr(buf_str(&t), "untested"));
	buf_release(&t);
	buf_release(&log);
	buf_release(&named);
}

/* The look ahead (bisect_run_planned): an oracle that records each plan
 * and checks that the calls after it are the planned ones, in order. */
struct planned {
	struct script s;
	size_t q[64], nq, at;
	unsigned plans, planned_calls;
};

static int planned_measure(void *ctx, size_t idx, double *value_out)
{
	struct planned *p = ctx;

	if (p->at < p->nq) {
		assert_int_equal(idx, p->q[p->at]);
		p->at++;
		p->planned_calls++;
	}
	return scripted(&p->s, idx, value_out);
}

static int planned_plan(void *ctx, const size_t *idx, size_t n)
{
	struct planned *p = ctx;

	assert_int_equal(p->at, p->nq);   /* the last plan was used up */
	assert_true(n > 0 && n <= 64);
	memcpy(p->q, idx, n * sizeof(*idx));
	p->nq = n;
	p->at = 0;
	p->plans++;
	return 0;
}

static void test_plan_announces_independent_rounds(void **state)
{
	struct planned p;
	struct bisect_opts o;
	struct bisect_result r1, r2;
	struct buf l1 = BUF_INIT, l2 = BUF_INIT;

	(void)state;
	bisect_opts_init(&o);
	for (int strat = 0; strat < 2; strat++) {
		o.strategy = strat ? BISECT_BINARY : BISECT_PROBABILISTIC;
		memset(&p, 0, sizeof(p));
		script_init(&p.s);
		assert_int_equal(bisect_run(&r1, N, &o, scripted, &p.s, &l1, NULL), 0);
		memset(&p, 0, sizeof(p));
		script_init(&p.s);
		assert_int_equal(bisect_run_planned(&r2, N, &o, planned_measure, planned_plan, &p,
						    &l2, NULL), 0);
		/* the same steps, log and result */
		assert_string_equal(buf_str(&l1), buf_str(&l2));
		assert_int_equal(r1.culprit_first, CULPRIT);
		assert_int_equal(r2.culprit_first, CULPRIT);
		assert_true(r2.check_done && r2.check_passed);
		/* every endpoint and check run was announced, no search run was */
		assert_int_equal(p.planned_calls, r2.endpoint_runs_old + r2.endpoint_runs_new +
				 r2.runs_check);
		/* the endpoint rounds (3 + 3, then a pair at a time) and the
		 * check's (5 + 5, then a pair at a time while unsure) */
		assert_true(p.plans >= 2);
		assert_int_equal(p.at, p.nq);
		buf_reset(&l1);
		buf_reset(&l2);
	}
	buf_release(&l1);
	buf_release(&l2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean_history_all_strategies),
		cmocka_unit_test(test_flaky_history),
		cmocka_unit_test(test_skips_next_to_culprit_give_a_range),
		cmocka_unit_test(test_endpoints_that_do_not_differ),
		cmocka_unit_test(test_find_fix),
		cmocka_unit_test(test_replay_reproduces),
		cmocka_unit_test(test_replay_of_logs_before_the_sharp_share),
		cmocka_unit_test(test_culprit_failing_the_check_is_reported),
		cmocka_unit_test(test_budget_spent_gives_candidates),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_simulator_is_deterministic_and_beats_fixed),
		cmocka_unit_test(test_binary_found_means_converged),
		cmocka_unit_test(test_check_runs_minimum),
		cmocka_unit_test(test_check_abandoned_for_skips_is_reported),
		cmocka_unit_test(test_budget_spent_without_a_likely_commit),
		cmocka_unit_test(test_find_fix_no_difference_names_its_probability),
		cmocka_unit_test(test_replay_final_verdicts_and_table),
		cmocka_unit_test(test_plan_announces_independent_rounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
