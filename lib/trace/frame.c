/* SPDX-License-Identifier: MIT */
/*
 * frame.c - the 16-byte record frame: type, flags, stored and raw payload
 * lengths, and a CRC-32C over the first 12 frame bytes and the stored payload.
 */
#include <string.h>
#include <zstd.h>

#include "trace/format.h"
#include "util/crc32c.h"

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

int dbtp_frame_put(struct dbtp_buf *out, int type, const void *payload,
		   size_t len, void *zctx, int level)
{
	size_t at, stored = len, bound;
	uint8_t *f;
	int flags = 0;
	uint32_t crc;

	if (len > DBTP_MAX_PAYLOAD)
		return -1;
	bound = zctx ? ZSTD_compressBound(len) : len;
	if (dbtp_buf_reserve(out, DBTP_FRAME_LEN + (bound > len ? bound : len)))
		return -1;
	at = out->len;
	f = out->p + at;
	if (zctx && len >= 64) {
		size_t z = ZSTD_compressCCtx(zctx, f + DBTP_FRAME_LEN, bound,
					     payload, len, level);

		if (ZSTD_isError(z))
			return -1;
		if (z < len) {
			stored = z;
			flags = DBTP_FLAG_ZSTD;
		}
	}
	if (!flags)
		memcpy(f + DBTP_FRAME_LEN, payload, len);
	f[0] = (uint8_t)type;
	f[1] = (uint8_t)flags;
	f[2] = f[3] = 0;
	put_le32(f + 4, (uint32_t)stored);
	put_le32(f + 8, (uint32_t)len);
	crc = dbtp_crc32c(0, f, 12);
	crc = dbtp_crc32c(crc, f + DBTP_FRAME_LEN, stored);
	put_le32(f + 12, crc);
	out->len = at + DBTP_FRAME_LEN + stored;
	return 0;
}

int dbtp_frame_parse(const uint8_t *p, struct dbtp_frame *f, const char **why)
{
	f->type = p[0];
	f->flags = p[1];
	f->stored_len = get_le32(p + 4);
	f->raw_len = get_le32(p + 8);
	f->crc = get_le32(p + 12);
	if (f->type == 0 || f->type > DBTP_REC_MAX) {
		*why = "unknown record type";
		return -1;
	}
	if (p[2] || p[3] || (f->flags & ~DBTP_FLAG_ZSTD)) {
		*why = "reserved frame bits set";
		return -1;
	}
	if (f->stored_len > DBTP_MAX_PAYLOAD || f->raw_len > DBTP_MAX_PAYLOAD) {
		*why = "record length over the 64 MiB limit";
		return -1;
	}
	if (!(f->flags & DBTP_FLAG_ZSTD) && f->stored_len != f->raw_len) {
		*why =
		    "stored and raw lengths differ in an uncompressed record";
		return -1;
	}
	return 0;
}

int dbtp_frame_crc_ok(const uint8_t *frame, const uint8_t *payload,
		      uint32_t stored_len)
{
	uint32_t crc = dbtp_crc32c(0, frame, 12);

	crc = dbtp_crc32c(crc, payload, stored_len);
	return crc == get_le32(frame + 12);
}
