/* SPDX-License-Identifier: MIT */
/*
 * wordfreq.c - the bundled demo workload: count the words of a text with a
 * hash table, on two threads (each counts half the lines), then print the
 * five most frequent.  `make demo` records it and summarises the trace.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBUCKETS 4096

struct word {
	char *text;
	unsigned long count;
	struct word *next;
};

struct table {
	struct word *b[NBUCKETS];
	const char *start, *end;
};

static unsigned hash(const char *s, size_t n)
{
	unsigned h = 2166136261u;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static void add(struct table *t, const char *s, size_t n)
{
	unsigned h = hash(s, n) % NBUCKETS;
	struct word *w;

	for (w = t->b[h]; w; w = w->next)
		if (strlen(w->text) == n && !memcmp(w->text, s, n)) {
			w->count++;
			return;
		}
	w = malloc(sizeof(*w));
	w->text = strndup(s, n);
	w->count = 1;
	w->next = t->b[h];
	t->b[h] = w;
}

static void *count(void *arg)
{
	struct table *t = arg;
	const char *p = t->start;

	while (p < t->end) {
		const char *q;

		while (p < t->end && (*p == ' ' || *p == '\n'))
			p++;
		for (q = p; q < t->end && *q != ' ' && *q != '\n'; q++)
			;
		if (q > p)
			add(t, p, (size_t)(q - p));
		p = q;
	}
	return NULL;
}

static int by_count(const void *a, const void *b)
{
	const struct word *x = *(struct word *const *)a,
			  *y = *(struct word *const *)b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->text, y->text);
}

int main(int argc, char **argv)
{
	static struct table t[2];
	struct word **all = NULL, *w;
	size_t n = 0, len, nall = 0;
	char *text, *mid;
	FILE *f;
	pthread_t th;

	if (argc != 2 || !(f = fopen(argv[1], "r"))) {
		fprintf(stderr, "usage: wordfreq FILE\n");
		return 2;
	}
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	text = malloc(len + 1);
	if (!text || fread(text, 1, len, f) != len)
		return 1;
	fclose(f);
	mid = memchr(text + len / 2, '\n', len - len / 2);
	mid = mid ? mid : text + len;
	t[0].start = text;
	t[0].end = mid;
	t[1].start = mid;
	t[1].end = text + len;
	pthread_create(&th, NULL, count, &t[1]);
	count(&t[0]);
	pthread_join(th, NULL);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < NBUCKETS; i++)
			for (w = t[k].b[i]; w; w = w->next) {
				if (k == 1) { /* merge into table 0 */
					struct word *o;
					unsigned h =
					    hash(w->text, strlen(w->text)) %
					    NBUCKETS;

					for (o = t[0].b[h]; o; o = o->next)
						if (!strcmp(o->text, w->text))
							break;
					if (o) {
						o->count += w->count;
						continue;
					}
				}
				all = realloc(all, (nall + 1) * sizeof(*all));
				all[nall++] = w;
			}
	qsort(all, nall, sizeof(*all), by_count);
	for (size_t i = 0; i < nall && i < 5; i++, n++)
		printf("%8lu %s\n", all[i]->count, all[i]->text);
	printf("%zu distinct words\n", nall);
	return 0;
}
