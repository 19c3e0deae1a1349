/* downsample.c - max-per-bucket thinning of a curve (see downsample.h). */
#include "judge/downsample.h"

size_t downsample_max(double *t, double *v, size_t n, size_t max_points)
{
	if (max_points == 0 || n <= max_points)
		return n;
	for (size_t k = 0; k < max_points; k++) {
		size_t lo = k * n / max_points, hi = (k + 1) * n / max_points;
		size_t best = lo;

		for (size_t i = lo + 1; i < hi; i++)
			if (v[i] > v[best] || v[best] != v[best])
				best = i;
		/* k <= lo always, so writing slot k never clobbers an unread bucket */
		t[k] = t[best];
		v[k] = v[best];
	}
	return max_points;
}
