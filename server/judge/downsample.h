/* downsample.h - thin a curve for plotting without hiding its peaks. */
#ifndef KC_DOWNSAMPLE_H
#define KC_DOWNSAMPLE_H

#include <stddef.h>

/*
 * downsample_max - keep at most max_points of the n points (t[i], v[i]),
 * in place, and return how many are kept. The points are cut into
 * max_points buckets of consecutive samples (bucket k holds indices
 * [k*n/max_points, (k+1)*n/max_points)) and each bucket keeps its point of
 * largest value, with that point's own time. Keeping the maximum rather
 * than the mean or the first point is deliberate: a 20 s stall inside a
 * bucket must still show as a 20 s peak (for lag, higher is worse). A run
 * with n <= max_points, or max_points 0, is returned whole. NaN values
 * lose against any number.
 */
size_t downsample_max(double *t, double *v, size_t n, size_t max_points);

#endif
