/* The payload pattern both benchmarks send and check, as msgsim's
 * workloads do: byte i of what PE src sends is a function of (src, i), so
 * a delivery is checked by regenerating it (no reference copy). Included by
 * alltoall.c and pingpong.c; header-only, nothing to build.
 */
#ifndef MSGSIM_BENCH_PATTERN_H
#define MSGSIM_BENCH_PATTERN_H

#include <stdint.h>
#include <string.h>

/* pattern is byte i of what PE src sends: a function of (src, i), so a
 * delivery is checked by regenerating it (one 64-bit word per 8 bytes). */
static uint64_t word(int src, long j) {
	uint64_t x = (uint64_t)(src + 1) * 0x9e3779b97f4a7c15ULL ^ (uint64_t)j * 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 31;
	return x ^ x >> 29;
}

static unsigned char pattern(int src, long i) { return (unsigned char)(word(src, i / 8) >> (8 * (i % 8))); }

static void fill(unsigned char *b, long n, int src) {
	for (long i = 0; i < n; i++)
		b[i] = pattern(src, i);
}

/* mismatch is the first offset of b that differs from src's pattern, or -1. */
static long mismatch(const unsigned char *b, long n, int src) {
	long i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, b + i, 8); /* little-endian hosts, as pattern() assumes */
		if (w != word(src, i / 8))
			break;
	}
	for (; i < n; i++)
		if (b[i] != pattern(src, i))
			return i;
	return -1;
}

#endif
