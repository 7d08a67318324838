/* SPDX-License-Identifier: MIT */
/*
 * validate.c - the numbers of dbtprof gentest validate: time ratios to a
 * baseline configuration, their errors, rank correlation and the testing
 * speedup (dbtp/gentest.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dbtp/gentest.h"

/* Ranks from 1, ties sharing their mean rank. */
static void ranks(const double *v, size_t n, double *r)
{
	for (size_t i = 0; i < n; i++) {
		size_t less = 0, same = 0;

		for (size_t j = 0; j < n; j++) {
			if (v[j] < v[i])
				less++;
			else if (v[j] == v[i])
				same++;
		}
		r[i] = less + (same + 1) / 2.0;
	}
}

/* Pearson correlation of @a and @b; NAN without spread. */
static double pearson(const double *a, const double *b, size_t n)
{
	double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;

	for (size_t i = 0; i < n; i++) {
		ma += a[i];
		mb += b[i];
	}
	ma /= n;
	mb /= n;
	for (size_t i = 0; i < n; i++) {
		sab += (a[i] - ma) * (b[i] - mb);
		saa += (a[i] - ma) * (a[i] - ma);
		sbb += (b[i] - mb) * (b[i] - mb);
	}
	if (saa <= 0 || sbb <= 0)
		return NAN;
	return sab / sqrt(saa * sbb);
}

int dbtp_gt_vstats(const double *orig, const double *gen, size_t n,
		   struct dbtp_gt_vstats *out, dbtp_err *err)
{
	double so = 0, sg = 0, *ro = NULL, *rg = NULL;

	memset(out, 0, sizeof(*out));
	if (!n)
		return dbtp_err_set(err, EINVAL, "no configuration");
	for (size_t i = 0; i < n; i++)
		if (!(orig[i] > 0) || !(gen[i] > 0))
			return dbtp_err_set(err, EINVAL,
					    "configuration %zu: times must be "
					    "> 0",
					    i);
	out->ratio_orig = malloc(n * sizeof(double));
	out->ratio_gen = malloc(n * sizeof(double));
	out->error = malloc(n * sizeof(double));
	ro = malloc(n * sizeof(double));
	rg = malloc(n * sizeof(double));
	if (!out->ratio_orig || !out->ratio_gen || !out->error || !ro || !rg) {
		free(ro);
		free(rg);
		dbtp_gt_vstats_free(out);
		return dbtp_err_set(err, ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		out->ratio_orig[i] = orig[i] / orig[0];
		out->ratio_gen[i] = gen[i] / gen[0];
		out->error[i] = fabs(out->ratio_gen[i] - out->ratio_orig[i]) /
				out->ratio_orig[i];
		if (i)
			out->mean_error += out->error[i];
		so += orig[i];
		sg += gen[i];
	}
	if (n > 1)
		out->mean_error /= (double)(n - 1);
	ranks(out->ratio_orig, n, ro);
	ranks(out->ratio_gen, n, rg);
	out->spearman = pearson(ro, rg, n);
	out->speedup = so / sg;
	free(ro);
	free(rg);
	return 0;
}

void dbtp_gt_vstats_free(struct dbtp_gt_vstats *v)
{
	free(v->ratio_orig);
	free(v->ratio_gen);
	free(v->error);
	memset(v, 0, sizeof(*v));
}

static double positive(double t)
{
	return t > 0 ? t : 1e-6;
}

double dbtp_gt_round_error(const double *orig, const double *orig0,
			   const double *gen, const double *gen0, unsigned r)
{
	double ro = positive(orig[r]) / positive(orig0[r]),
	       rg = positive(gen[r]) / positive(gen0[r]);

	return fabs(rg - ro) / ro;
}
