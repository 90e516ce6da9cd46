/*
 * selabel-oracle: libselinux's own file_contexts lookup, as a reference
 * for differential testing of rampart-label (built by rampart-oracle's
 * build.rs; see crates/oracle/README.md).
 *
 * Test support only: it shares no code with the Rust implementation.  It
 * opens the file_contexts backend once with selabel_open(SELABEL_CTX_FILE)
 * and answers lookups with selabel_lookup_raw(): no context validation
 * (SELinux is not enabled in the kernels Rampart targets, so
 * SELABEL_OPT_VALIDATE would fail) and no mcstrans translation.
 *
 * Usage:
 *   selabel-oracle [--path FILE] [--baseonly]
 *       line protocol on stdin/stdout (below)
 *   selabel-oracle [--path FILE] [--baseonly] [--passes N] --time PATHLIST
 *       times selabel_lookup_raw() over every line of PATHLIST (same line
 *       format as the protocol): N passes (default 5, at most 99), prints
 *       "NS_PER_LOOKUP LOOKUPS_PER_PASS" with the median pass (the upper
 *       median for even N).  --passes 1 lets a caller interleave single
 *       passes with its own.
 *
 *   --path FILE   SELABEL_OPT_PATH: FILE instead of the system
 *                 file_contexts; libselinux then reads FILE.homedirs,
 *                 FILE.local, FILE.subs_dist and FILE.subs beside it.
 *   --baseonly    SELABEL_OPT_BASEONLY: skip .homedirs and .local.
 *
 * Line protocol: one lookup per input line, "PATH" or "PATH<TAB>MODE".
 * MODE is octal st_mode file-type bits (e.g. 100000 for a regular file,
 * 40000 for a directory); 0 or no MODE means "any type".  PATH is escaped
 * so that every byte can be sent: "\\" is a backslash, "\n" a newline,
 * "\t" a tab, "\xHH" any byte; other bytes stand for themselves.  The
 * answer is one line: the raw context, "<<none>>" when libselinux finds no
 * label (ENOENT: no matching spec, or a spec whose context is <<none>>),
 * or "error: MESSAGE" for any other failure.  An empty input line writes
 * nothing and flushes stdout (output is otherwise fully buffered and
 * flushed at EOF).
 *
 * Exit status: 0 on EOF, 2 on usage errors, 1 when selabel_open fails.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include <selinux/label.h>
#include <selinux/selinux.h>

struct query {
	char *path;
	int mode;
};

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Parses one input line (without its newline) in place into q.  Returns 0,
 * or -1 with a message in *why.
 */
static int parse_line(char *line, struct query *q, const char **why)
{
	char *tab = strrchr(line, '\t');
	char *in, *out;

	q->mode = 0;
	if (tab) {
		char *end;
		long m;

		*tab = '\0';
		errno = 0;
		m = strtol(tab + 1, &end, 8);
		if (errno || *end != '\0' || end == tab + 1 || m < 0) {
			*why = "MODE is not an octal number";
			return -1;
		}
		q->mode = (int)m;
	}
	in = out = line;
	while (*in) {
		if (*in != '\\') {
			*out++ = *in++;
			continue;
		}
		in++;
		switch (*in) {
		case '\\':
			*out++ = '\\';
			in++;
			break;
		case 'n':
			*out++ = '\n';
			in++;
			break;
		case 't':
			*out++ = '\t';
			in++;
			break;
		case 'x': {
			int hi = hexval(in[1]);
			int lo = hi < 0 ? -1 : hexval(in[2]);

			if (lo < 0) {
				*why = "bad \\xHH escape";
				return -1;
			}
			*out++ = (char)(hi * 16 + lo);
			in += 3;
			break;
		}
		default:
			*why = "unknown escape (use \\\\, \\n, \\t or \\xHH)";
			return -1;
		}
	}
	*out = '\0';
	q->path = line;
	return 0;
}

static struct selabel_handle *open_handle(const char *path, int baseonly)
{
	struct selinux_opt opts[2];
	unsigned n = 0;
	struct selabel_handle *h;

	if (path) {
		opts[n].type = SELABEL_OPT_PATH;
		opts[n].value = path;
		n++;
	}
	if (baseonly) {
		opts[n].type = SELABEL_OPT_BASEONLY;
		opts[n].value = (const char *)1;
		n++;
	}
	h = selabel_open(SELABEL_CTX_FILE, n ? opts : NULL, n);
	if (!h)
		fprintf(stderr, "selabel-oracle: selabel_open(%s) failed: %s\n",
			path ? path : "system file_contexts", strerror(errno));
	return h;
}

static int serve(struct selabel_handle *h)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	while ((len = getline(&line, &cap, stdin)) >= 0) {
		struct query q;
		const char *why = NULL;
		char *con = NULL;

		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len == 0) {
			fflush(stdout);
			continue;
		}
		if (parse_line(line, &q, &why) < 0) {
			printf("error: %s\n", why);
			continue;
		}
		errno = 0;
		if (selabel_lookup_raw(h, &con, q.path, q.mode) == 0) {
			printf("%s\n", con);
			freecon(con);
		} else if (errno == ENOENT) {
			printf("<<none>>\n");
		} else {
			printf("error: %s\n", strerror(errno));
		}
	}
	free(line);
	fflush(stdout);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int time_lookups(struct selabel_handle *h, const char *list,
			int passes)
{
	FILE *f = fopen(list, "re");
	struct query *qs = NULL;
	size_t n = 0, cap_q = 0, i;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	uint64_t pass_ns[99];
	volatile size_t found = 0;
	int p;

	if (!f) {
		fprintf(stderr, "selabel-oracle: cannot open %s: %s\n", list,
			strerror(errno));
		return 2;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		const char *why = NULL;

		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len == 0)
			continue;
		if (n == cap_q) {
			cap_q = cap_q ? cap_q * 2 : 1024;
			qs = realloc(qs, cap_q * sizeof(*qs));
			if (!qs) {
				perror("selabel-oracle: realloc");
				return 1;
			}
		}
		if (parse_line(line, &qs[n], &why) < 0) {
			fprintf(stderr, "selabel-oracle: %s:%zu: %s\n", list,
				n + 1, why);
			return 2;
		}
		qs[n].path = strdup(qs[n].path);
		if (!qs[n].path) {
			perror("selabel-oracle: strdup");
			return 1;
		}
		n++;
	}
	free(line);
	fclose(f);
	if (n == 0) {
		fprintf(stderr, "selabel-oracle: %s has no paths\n", list);
		return 2;
	}
	for (p = 0; p < passes; p++) {
		uint64_t t0 = now_ns();

		for (i = 0; i < n; i++) {
			char *con = NULL;

			if (selabel_lookup_raw(h, &con, qs[i].path,
					       qs[i].mode) == 0) {
				found++;
				freecon(con);
			}
		}
		pass_ns[p] = now_ns() - t0;
	}
	qsort(pass_ns, (size_t)passes, sizeof(pass_ns[0]), cmp_u64);
	printf("%.1f %zu\n", (double)pass_ns[passes / 2] / (double)n, n);
	for (i = 0; i < n; i++)
		free(qs[i].path);
	free(qs);
	return 0;
}

int main(int argc, char **argv)
{
	const char *path = NULL, *time_list = NULL;
	int baseonly = 0, passes = 5, i, rc;
	struct selabel_handle *h;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--path") && i + 1 < argc) {
			path = argv[++i];
		} else if (!strcmp(argv[i], "--passes") && i + 1 < argc) {
			passes = atoi(argv[++i]);
			if (passes < 1 || passes > 99) {
				fprintf(stderr, "selabel-oracle: --passes must be 1..99\n");
				return 2;
			}
		} else if (!strcmp(argv[i], "--time") && i + 1 < argc) {
			time_list = argv[++i];
		} else if (!strcmp(argv[i], "--baseonly")) {
			baseonly = 1;
		} else {
			fprintf(stderr,
				"usage: selabel-oracle [--path FILE] [--baseonly] [--passes N] [--time PATHLIST]\n");
			return 2;
		}
	}
	h = open_handle(path, baseonly);
	if (!h)
		return 1;
	rc = time_list ? time_lookups(h, time_list, passes) : serve(h);
	selabel_close(h);
	return rc;
}
