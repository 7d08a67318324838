/* SPDX-License-Identifier: MIT */
/* timing.h - what the pipeline model needs of the timing table inside. */
#ifndef DBTP_ANALYSIS_TIMING_H
#define DBTP_ANALYSIS_TIMING_H

#include "dbtp/cycles.h"

/** timing_index() - index of a form, or -1 if not in the table. */
int64_t timing_index(const dbtp_timing *t, const uint8_t *bytes, unsigned len);

/** timing_at() - the timing of form @idx (valid until the next resolve). */
const struct dbtp_form_timing *timing_at(const dbtp_timing *t, uint32_t idx);

/** timing_default() - the timing given to forms LLVM cannot time. */
void timing_default(const dbtp_timing *t, struct dbtp_form_timing *ft);

#endif
