/*
 * sepol-oracle: an independent reference oracle for SELinux access decisions.
 *
 * This program is linked STATICALLY against libsepol.a so that it can use
 * libsepol's internal (hidden in the shared object) service functions:
 * sepol_set_policydb(), sepol_context_to_sid(), sepol_compute_av(),
 * sepol_transition_sid(), evaluate_conds() and friends.  Booleans are changed
 * in-process in the loaded policydb, exactly as checkpolicy/test/dispol.c does.
 *
 * It is test support for Rampart (a userspace reimplementation of SELinux
 * access decisions): it shares no code with the Rust implementation, so it can
 * serve as a differential-testing reference.
 *
 * Usage:
 *   sepol-oracle POLICYFILE                 line protocol on stdin/stdout
 *   sepol-oracle --time-load POLICYFILE N   median ns per policydb_read()
 *   sepol-oracle --time-av POLICYFILE QUERYFILE
 *                                           median ns per sepol_compute_av()
 *   sepol-oracle --rss POLICYFILE           VmRSS (KiB) before/after load
 *   sepol-oracle --gen POLICYFILE SEED COUNT
 *                                           same output as the `gen` command
 *
 * Line protocol (one command per line; every command except `sync` and `gen`
 * writes exactly one response line; output is fully buffered and flushed on
 * `sync` and at EOF):
 *
 *   q SCON TCON CLASSNAME     -> "0xALLOWED 0xAUDITALLOW 0xAUDITDENY P"
 *   qv SCON TCON CLASSVALUE   -> same, class given by its 1-based value
 *   create SCON TCON CLASS    -> context string (sepol_transition_sid)
 *   member SCON TCON CLASS    -> context string (sepol_member_sid)
 *   change SCON TCON CLASS    -> context string (sepol_change_sid)
 *   genfs FSTYPE PATH CLASS   -> context string (sepol_genfs_sid)
 *   bool NAME 0|1             -> "ok"   (takes effect at `commit`)
 *   commit                    -> "ok"   (evaluate_conds)
 *   bools-all 0|1             -> "ok"   (sets every boolean and commits)
 *   bools-default             -> "ok"   (defaults from the file, commits)
 *   bools-random SEED         -> "ok"   (xorshift64*, see below, commits)
 *   bools                     -> "name=0|1 name=0|1 ..." (value order)
 *   perms CLASSNAME           -> "name=VALUE ..." (VALUE is libsepol's
 *                                 1-based permission value; the access
 *                                 vector bit is 1 << (VALUE-1))
 *   gen SEED COUNT            -> COUNT lines "SCON TCON CLASSNAME"
 *   ping                      -> "pong"
 *   sync                      -> (no output) flush stdout
 *
 * Any failure is reported as a single line starting with "error: ".
 *
 * bools-random: state = SEED (or 0x9E3779B97F4A7C15 if SEED is 0);
 * next(): x ^= x >> 12; x ^= x << 25; x ^= x >> 27; return x * 0x2545F4914F6CDD1D
 * (xorshift64*).  Boolean with value i (1-based, policy order) gets bit 63 of
 * the i-th output.
 *
 * A query whose booleans were changed with `bool` but not yet committed is
 * answered after an implicit commit (so a missing `commit` cannot give stale
 * answers).
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sepol/debug.h>
#include <sepol/handle.h>
#include <sepol/policydb/policydb.h>
#include <sepol/policydb/services.h>
#include <sepol/policydb/sidtab.h>
#include <sepol/policydb/conditional.h>
#include <sepol/policydb/ebitmap.h>
#include <sepol/policydb/hashtab.h>
#include <sepol/policydb/avtab.h>
#include <sepol/policydb/context.h>
#include <sepol/policydb/mls_types.h>

/* libsepol's compatibility message handle (used for ERR(NULL, ...)).  It is a
 * global object in libsepol.a; its type is opaque to us, which is fine since
 * we only take its address. */
extern struct sepol_handle sepol_compat_handle;

static policydb_t pdb;
static sidtab_t sidtab;
static int *bool_defaults;
static int bools_dirty;

/* ------------------------------------------------------------------ */
/* libsepol message capture                                            */

static char sepol_msg[512];
static int sepol_msg_capture;

static void msg_cb(void *arg, sepol_handle_t *handle, const char *fmt, ...)
{
	va_list ap;
	(void)arg;
	(void)handle;
	if (!sepol_msg_capture || sepol_msg[0])
		return; /* keep the first (most specific) message */
	va_start(ap, fmt);
	vsnprintf(sepol_msg, sizeof(sepol_msg), fmt, ap);
	va_end(ap);
}

static void msg_begin(void)
{
	sepol_msg[0] = 0;
	sepol_msg_capture = 1;
}

static void msg_end(void)
{
	sepol_msg_capture = 0;
	/* messages must never contain newlines in our one-line protocol */
	for (char *p = sepol_msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
}

/* ------------------------------------------------------------------ */
/* PRNG: xorshift64*                                                   */

typedef struct {
	uint64_t s;
} rng_t;

static void rng_seed(rng_t *r, uint64_t seed)
{
	r->s = seed ? seed : 0x9E3779B97F4A7C15ULL;
}

static uint64_t rng_next(rng_t *r)
{
	uint64_t x = r->s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static uint32_t rng_below(rng_t *r, uint32_t n)
{
	if (n == 0)
		return 0;
	return (uint32_t)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* percent chance */
static int rng_pct(rng_t *r, uint32_t pct)
{
	return rng_below(r, 100) < pct;
}

/* ------------------------------------------------------------------ */
/* small helpers                                                       */

static int read_file(const char *path, char **data, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;
	if (!f)
		return -1;
	for (;;) {
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : (1 << 20);
			char *nb = realloc(buf, ncap);
			if (!nb) {
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nb;
			cap = ncap;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	*data = buf;
	*len = n;
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t median_u64(uint64_t *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	if (n % 2)
		return v[n / 2];
	return (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* split up to max whitespace-separated tokens in place; returns count
 * (max+1 means "too many") */
static int split_ws(char *s, char **tok, int max)
{
	int n = 0;
	char *save = NULL;
	for (char *t = strtok_r(s, " \t\r\n", &save); t;
	     t = strtok_r(NULL, " \t\r\n", &save)) {
		if (n == max)
			return max + 1;
		tok[n++] = t;
	}
	return n;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/* ------------------------------------------------------------------ */
/* policy loading                                                      */

static int load_policydb_mem(policydb_t *p, char *data, size_t len)
{
	policy_file_t pf;
	policy_file_init(&pf);
	pf.type = PF_USE_MEMORY;
	pf.data = data;
	pf.len = len;
	if (policydb_init(p))
		return -1;
	if (policydb_read(p, &pf, 0)) {
		policydb_destroy(p);
		return -1;
	}
	return 0;
}

/* Re-evaluate every conditional node, forcing the AVTAB_ENABLED flags of
 * all conditional rules to be recomputed (cur_state is reset to an
 * impossible value so evaluate_cond_node() rewrites the flags). */
static void force_evaluate_conds(policydb_t *p)
{
	for (cond_node_t *c = p->cond_list; c; c = c->next)
		c->cur_state = 2;
	evaluate_conds(p);
}

static int load_policy(const char *path)
{
	char *data;
	size_t len;
	if (read_file(path, &data, &len)) {
		fprintf(stderr, "sepol-oracle: cannot read %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	msg_begin();
	int rc = load_policydb_mem(&pdb, data, len);
	msg_end();
	free(data);
	if (rc) {
		fprintf(stderr, "sepol-oracle: policydb_read failed for %s: %s\n",
			path, sepol_msg);
		return -1;
	}
	sepol_set_policydb(&pdb);
	if (sepol_sidtab_init(&sidtab)) {
		fprintf(stderr, "sepol-oracle: sidtab init failed\n");
		return -1;
	}
	sepol_set_sidtab(&sidtab);

	bool_defaults = calloc(pdb.p_bools.nprim + 1, sizeof(int));
	if (!bool_defaults)
		return -1;
	for (uint32_t i = 0; i < pdb.p_bools.nprim; i++)
		bool_defaults[i] = pdb.bool_val_to_struct[i]->state;
	force_evaluate_conds(&pdb);
	return 0;
}

/* ------------------------------------------------------------------ */
/* context string -> SID cache                                         */
/*
 * libsepol's sidtab deduplicates contexts with a linear scan over all
 * entries, so it must be kept small.  We keep a string->SID hash table in
 * front of it and reset both when the sidtab reaches SIDTAB_CAP entries.
 */

#define SIDTAB_CAP 512
#define CACHE_SLOTS 2048 /* power of two, > 2 * SIDTAB_CAP */

typedef struct {
	char *key;
	uint64_t hash;
	sepol_security_id_t sid;
} cache_ent_t;

static cache_ent_t cache[CACHE_SLOTS];
static unsigned cache_n;

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static void sid_reset(void)
{
	for (unsigned i = 0; i < CACHE_SLOTS; i++) {
		free(cache[i].key);
		cache[i].key = NULL;
	}
	cache_n = 0;
	sepol_sidtab_destroy(&sidtab);
	sepol_sidtab_init(&sidtab);
}

/* make sure `need` more SIDs fit without a reset in between */
static void sid_reserve(unsigned need)
{
	if (sidtab.nel + need > SIDTAB_CAP || cache_n + need > SIDTAB_CAP)
		sid_reset();
}

static int role_has_type(const role_datum_t *r, uint32_t typeval)
{
	return ebitmap_get_bit(&r->types.types, typeval - 1);
}

/* Explain why libsepol said "invalid security context" (all names known). */
static const char *diagnose_invalid(const char *con)
{
	char buf[1024];
	char *f[4] = {0};
	if (strlen(con) >= sizeof(buf))
		return "invalid context";
	strcpy(buf, con);
	char *p = buf;
	for (int i = 0; i < 3; i++) {
		f[i] = p;
		char *c = strchr(p, ':');
		if (!c)
			return "invalid context";
		*c = 0;
		p = c + 1;
	}
	f[3] = p;
	user_datum_t *u = hashtab_search(pdb.p_users.table, f[0]);
	role_datum_t *r = hashtab_search(pdb.p_roles.table, f[1]);
	type_datum_t *t = hashtab_search(pdb.p_types.table, f[2]);
	if (!u || !r || !t)
		return "invalid context";
	if (r->s.value != OBJECT_R_VAL) {
		if (!ebitmap_get_bit(&r->cache, t->s.value - 1))
			return "role not authorized for type";
		if (!ebitmap_get_bit(&u->cache, r->s.value - 1))
			return "user not authorized for role";
	}
	return "invalid MLS range (high must dominate low, categories valid for "
	       "the sensitivity, and within the user's range)";
}

/* Returns 0 and *sid on success; on failure writes a message to err. */
static int ctx_to_sid(const char *con, sepol_security_id_t *sid, char *err,
		      size_t errlen)
{
	uint64_t h = fnv1a(con);
	unsigned i = (unsigned)h & (CACHE_SLOTS - 1);
	while (cache[i].key) {
		if (cache[i].hash == h && !strcmp(cache[i].key, con)) {
			*sid = cache[i].sid;
			return 0;
		}
		i = (i + 1) & (CACHE_SLOTS - 1);
	}
	if (!strcmp(con, "<<none>>")) {
		/* libsepol's parser returns success with a NULL record for
		 * this string and then dereferences it; never pass it on. */
		snprintf(err, errlen, "context <<none>> is not a security context");
		return -1;
	}
	sepol_security_id_t s = 0;
	msg_begin();
	int rc = sepol_context_to_sid((sepol_security_context_t)con,
				      strlen(con), &s);
	msg_end();
	if (rc < 0 || s == 0) {
		const char *why = sepol_msg[0] ? sepol_msg : "could not parse";
		if (!strncmp(sepol_msg, "invalid security context", 24))
			why = diagnose_invalid(con);
		snprintf(err, errlen, "%s", why);
		return -1;
	}
	cache[i].key = strdup(con);
	if (cache[i].key) {
		cache[i].hash = h;
		cache[i].sid = s;
		cache_n++;
	}
	*sid = s;
	return 0;
}

/* ------------------------------------------------------------------ */
/* booleans                                                            */

static void commit_bools(void)
{
	evaluate_conds(&pdb);
	bools_dirty = 0;
}

static void cmd_bool(char **tok, int n)
{
	uint64_t v;
	if (n != 3 || parse_u64(tok[2], &v) || v > 1) {
		printf("error: usage: bool NAME 0|1\n");
		return;
	}
	cond_bool_datum_t *b = hashtab_search(pdb.p_bools.table, tok[1]);
	if (!b) {
		printf("error: unknown boolean %s\n", tok[1]);
		return;
	}
	b->state = (int)v;
	bools_dirty = 1;
	printf("ok\n");
}

static void cmd_bools_all(char **tok, int n)
{
	uint64_t v;
	if (n != 2 || parse_u64(tok[1], &v) || v > 1) {
		printf("error: usage: bools-all 0|1\n");
		return;
	}
	for (uint32_t i = 0; i < pdb.p_bools.nprim; i++)
		pdb.bool_val_to_struct[i]->state = (int)v;
	commit_bools();
	printf("ok\n");
}

static void cmd_bools_default(void)
{
	for (uint32_t i = 0; i < pdb.p_bools.nprim; i++)
		pdb.bool_val_to_struct[i]->state = bool_defaults[i];
	commit_bools();
	printf("ok\n");
}

static void cmd_bools_random(char **tok, int n)
{
	uint64_t seed;
	if (n != 2 || parse_u64(tok[1], &seed)) {
		printf("error: usage: bools-random SEED\n");
		return;
	}
	rng_t r;
	rng_seed(&r, seed);
	for (uint32_t i = 0; i < pdb.p_bools.nprim; i++)
		pdb.bool_val_to_struct[i]->state = (int)(rng_next(&r) >> 63);
	commit_bools();
	printf("ok\n");
}

static void cmd_bools_list(void)
{
	for (uint32_t i = 0; i < pdb.p_bools.nprim; i++)
		printf("%s%s=%d", i ? " " : "", pdb.p_bool_val_to_name[i],
		       pdb.bool_val_to_struct[i]->state ? 1 : 0);
	printf("\n");
}

/* ------------------------------------------------------------------ */
/* perms                                                               */

static char **perm_names;
static uint32_t perm_names_len;

static int collect_perm(hashtab_key_t k, hashtab_datum_t d, void *arg)
{
	perm_datum_t *p = d;
	(void)arg;
	if (p->s.value >= 1 && p->s.value <= perm_names_len)
		perm_names[p->s.value - 1] = k;
	return 0;
}

static void cmd_perms(char **tok, int n)
{
	char *names[32] = {0};
	if (n != 2) {
		printf("error: usage: perms CLASSNAME\n");
		return;
	}
	class_datum_t *c = hashtab_search(pdb.p_classes.table, tok[1]);
	if (!c) {
		printf("error: unknown class %s\n", tok[1]);
		return;
	}
	perm_names = names;
	perm_names_len = 32;
	if (c->comdatum)
		hashtab_map(c->comdatum->permissions.table, collect_perm, NULL);
	hashtab_map(c->permissions.table, collect_perm, NULL);
	int first = 1;
	for (uint32_t i = 0; i < 32; i++) {
		if (!names[i])
			continue;
		printf("%s%s=%u", first ? "" : " ", names[i], i + 1);
		first = 0;
	}
	printf("\n");
}

/* ------------------------------------------------------------------ */
/* queries                                                             */

static int lookup_class(const char *s, int by_value, sepol_security_class_t *out,
			char *err, size_t errlen)
{
	if (by_value) {
		uint64_t v;
		if (parse_u64(s, &v) || v == 0 || v > pdb.p_classes.nprim) {
			snprintf(err, errlen, "class value out of range: %s", s);
			return -1;
		}
		*out = (sepol_security_class_t)v;
		return 0;
	}
	class_datum_t *c = hashtab_search(pdb.p_classes.table, s);
	if (!c) {
		snprintf(err, errlen, "unknown class %s", s);
		return -1;
	}
	*out = (sepol_security_class_t)c->s.value;
	return 0;
}

/* Parse "CMD SCON TCON CLASS", convert to SIDs.  Returns 0 on success. */
static int prepare_triple(char **tok, int n, int by_value, unsigned reserve,
			  sepol_security_id_t *ssid, sepol_security_id_t *tsid,
			  sepol_security_class_t *cls)
{
	char err[600];
	if (n != 4) {
		printf("error: usage: %s SCONTEXT TCONTEXT CLASS\n", tok[0]);
		return -1;
	}
	sid_reserve(reserve);
	if (ctx_to_sid(tok[1], ssid, err, sizeof(err))) {
		printf("error: invalid scontext: %s\n", err);
		return -1;
	}
	if (ctx_to_sid(tok[2], tsid, err, sizeof(err))) {
		printf("error: invalid tcontext: %s\n", err);
		return -1;
	}
	if (lookup_class(tok[3], by_value, cls, err, sizeof(err))) {
		printf("error: %s\n", err);
		return -1;
	}
	if (bools_dirty)
		commit_bools();
	return 0;
}

static void cmd_query(char **tok, int n, int by_value)
{
	sepol_security_id_t ssid, tsid;
	sepol_security_class_t cls;
	struct sepol_av_decision avd;
	if (prepare_triple(tok, n, by_value, 2, &ssid, &tsid, &cls))
		return;
	memset(&avd, 0, sizeof(avd));
	msg_begin();
	int rc = sepol_compute_av(ssid, tsid, cls, 0, &avd);
	msg_end();
	if (rc) {
		printf("error: sepol_compute_av failed (%d): %s\n", rc, sepol_msg);
		return;
	}
	context_struct_t *sc = sepol_sidtab_search(&sidtab, ssid);
	int permissive = sc ? ebitmap_get_bit(&pdb.permissive_map, sc->type) : 0;
	printf("0x%08x 0x%08x 0x%08x %d\n", avd.allowed, avd.auditallow,
	       avd.auditdeny, permissive ? 1 : 0);
}

/* Prints the context of `sid`, or an error line. */
static void print_context(sepol_security_id_t sid)
{
	char *str = NULL;
	size_t len = 0;
	msg_begin();
	int rc = sepol_sid_to_context(sid, &str, &len);
	msg_end();
	if (rc || !str) {
		printf("error: sid_to_context failed: %s\n", sepol_msg);
		free(str);
		return;
	}
	printf("%s\n", str);
	free(str);
}

static void cmd_compute_sid(char **tok, int n, int which)
{
	sepol_security_id_t ssid, tsid, out = 0;
	sepol_security_class_t cls;
	if (prepare_triple(tok, n, 0, 3, &ssid, &tsid, &cls))
		return;
	int rc;
	msg_begin();
	if (which == 0)
		rc = sepol_transition_sid(ssid, tsid, cls, &out);
	else if (which == 1)
		rc = sepol_member_sid(ssid, tsid, cls, &out);
	else
		rc = sepol_change_sid(ssid, tsid, cls, &out);
	msg_end();
	if (rc) {
		if (rc == -EACCES)
			printf("error: computed context is invalid\n");
		else
			printf("error: compute_sid failed (%d): %s\n", rc, sepol_msg);
		return;
	}
	print_context(out);
}

/* genfs FSTYPE PATH CLASS: sepol_genfs_sid, the label of a file at PATH
 * on a filesystem labeled by genfscon rules. */
static void cmd_genfs(char **tok, int n)
{
	char err[600];
	sepol_security_class_t cls;
	sepol_security_id_t sid = 0;
	if (n != 4) {
		printf("error: usage: genfs FSTYPE PATH CLASS\n");
		return;
	}
	if (lookup_class(tok[3], 0, &cls, err, sizeof(err))) {
		printf("error: %s\n", err);
		return;
	}
	sid_reserve(1);
	msg_begin();
	int rc = sepol_genfs_sid(tok[1], tok[2], cls, &sid);
	msg_end();
	if (rc) {
		printf("error: no genfs entry (%d)\n", rc);
		return;
	}
	print_context(sid);
}

/* ------------------------------------------------------------------ */
/* generator                                                           */

typedef struct {
	uint32_t *v;
	uint32_t n, cap;
} vec_t;

static int vec_push(vec_t *v, uint32_t x)
{
	if (v->n == v->cap) {
		uint32_t nc = v->cap ? v->cap * 2 : 8;
		uint32_t *nv = realloc(v->v, nc * sizeof(uint32_t));
		if (!nv)
			return -1;
		v->v = nv;
		v->cap = nc;
	}
	v->v[v->n++] = x;
	return 0;
}

typedef struct {
	char *name;
	uint32_t value;
} alias_t;

static struct {
	int ready;
	uint32_t ntypes, nroles, nusers, nclasses, nsens, ncats;
	vec_t types;       /* non-attribute type values */
	vec_t attrs;       /* attribute values */
	alias_t *aliases;  /* type aliases */
	uint32_t naliases, aliases_cap;
	vec_t *type_aliases; /* per type value-1: indices into aliases */
	vec_t *type_roles; /* per type value-1: role values (not object_r) */
	vec_t *role_types; /* per role value-1: type values */
	vec_t *role_users; /* per role value-1: user values */
	vec_t *user_roles; /* per user value-1: role values (not object_r) */
	vec_t users_with_roles;
	avtab_ptr_t *rules;
	uint32_t nrules;
	avtab_ptr_t *crules;
	uint32_t ncrules;
	vec_t *class_rules; /* per class value-1: indices; >= nrules => crules */
	uint32_t fclass;    /* "every class" stratum cursor */
	/* universe MLS range: lowest sensitivity .. highest, all cats */
} G;

typedef struct {
	avtab_ptr_t *arr;
	uint32_t n;
} avcollect_t;

static int collect_alias(hashtab_key_t k, hashtab_datum_t d, void *arg)
{
	type_datum_t *t = d;
	(void)arg;
	if (t->primary || t->flavor == TYPE_ATTRIB)
		return 0;
	if (G.naliases == G.aliases_cap) {
		uint32_t nc = G.aliases_cap ? G.aliases_cap * 2 : 64;
		alias_t *na = realloc(G.aliases, nc * sizeof(alias_t));
		if (!na)
			return -1;
		G.aliases = na;
		G.aliases_cap = nc;
	}
	G.aliases[G.naliases].name = k;
	G.aliases[G.naliases].value = t->s.value;
	G.naliases++;
	return 0;
}

static avtab_ptr_t *collect_avtab(avtab_t *a, uint32_t *n)
{
	avtab_ptr_t *arr = malloc((a->nel + 1) * sizeof(avtab_ptr_t));
	uint32_t k = 0;
	if (!arr)
		return NULL;
	for (uint32_t i = 0; i < a->nslot; i++)
		for (avtab_ptr_t c = a->htable[i]; c; c = c->next)
			if (k < a->nel)
				arr[k++] = c;
	*n = k;
	return arr;
}

static int cmp_alias(const void *a, const void *b)
{
	return strcmp(((const alias_t *)a)->name, ((const alias_t *)b)->name);
}

static int cmp_avptr(const void *a, const void *b)
{
	const avtab_key_t *x = &(*(const avtab_ptr_t *)a)->key;
	const avtab_key_t *y = &(*(const avtab_ptr_t *)b)->key;
	if (x->source_type != y->source_type)
		return x->source_type < y->source_type ? -1 : 1;
	if (x->target_type != y->target_type)
		return x->target_type < y->target_type ? -1 : 1;
	if (x->target_class != y->target_class)
		return x->target_class < y->target_class ? -1 : 1;
	uint16_t sx = x->specified & ~AVTAB_ENABLED, sy = y->specified & ~AVTAB_ENABLED;
	if (sx != sy)
		return sx < sy ? -1 : 1;
	return 0;
}

static int mls_init(void);
static int mls_user_init(void);

static int gen_init(void)
{
	if (G.ready)
		return 0;
	G.ntypes = pdb.p_types.nprim;
	G.nroles = pdb.p_roles.nprim;
	G.nusers = pdb.p_users.nprim;
	G.nclasses = pdb.p_classes.nprim;
	G.nsens = pdb.p_levels.nprim;
	G.ncats = pdb.p_cats.nprim;
	G.type_roles = calloc(G.ntypes, sizeof(vec_t));
	G.type_aliases = calloc(G.ntypes, sizeof(vec_t));
	G.role_types = calloc(G.nroles, sizeof(vec_t));
	G.role_users = calloc(G.nroles, sizeof(vec_t));
	G.user_roles = calloc(G.nusers, sizeof(vec_t));
	G.class_rules = calloc(G.nclasses, sizeof(vec_t));
	if (!G.type_roles || !G.type_aliases || !G.role_types || !G.role_users ||
	    !G.user_roles || !G.class_rules)
		return -1;

	for (uint32_t t = 1; t <= G.ntypes; t++) {
		type_datum_t *td = pdb.type_val_to_struct[t - 1];
		if (!td)
			continue;
		if (td->flavor == TYPE_ATTRIB)
			vec_push(&G.attrs, t);
		else
			vec_push(&G.types, t);
	}
	if (hashtab_map(pdb.p_types.table, collect_alias, NULL))
		return -1;
	/* hash order is not meaningful; sort for determinism */
	if (G.naliases)
		qsort(G.aliases, G.naliases, sizeof(alias_t), cmp_alias);
	for (uint32_t i = 0; i < G.naliases; i++)
		if (G.aliases[i].value >= 1 && G.aliases[i].value <= G.ntypes)
			vec_push(&G.type_aliases[G.aliases[i].value - 1], i);

	for (uint32_t r = 1; r <= G.nroles; r++) {
		role_datum_t *rd = pdb.role_val_to_struct[r - 1];
		if (!rd || r == OBJECT_R_VAL)
			continue;
		ebitmap_node_t *node;
		unsigned int bit;
		ebitmap_for_each_positive_bit(&rd->types.types, node, bit) {
			uint32_t t = bit + 1;
			if (t > G.ntypes)
				continue;
			type_datum_t *td = pdb.type_val_to_struct[t - 1];
			if (!td || td->flavor == TYPE_ATTRIB)
				continue;
			vec_push(&G.role_types[r - 1], t);
			vec_push(&G.type_roles[t - 1], r);
		}
	}
	for (uint32_t u = 1; u <= G.nusers; u++) {
		user_datum_t *ud = pdb.user_val_to_struct[u - 1];
		if (!ud)
			continue;
		ebitmap_node_t *node;
		unsigned int bit;
		ebitmap_for_each_positive_bit(&ud->roles.roles, node, bit) {
			uint32_t r = bit + 1;
			if (r > G.nroles || r == OBJECT_R_VAL)
				continue;
			vec_push(&G.user_roles[u - 1], r);
			vec_push(&G.role_users[r - 1], u);
		}
		if (G.user_roles[u - 1].n)
			vec_push(&G.users_with_roles, u);
	}

	G.rules = collect_avtab(&pdb.te_avtab, &G.nrules);
	G.crules = collect_avtab(&pdb.te_cond_avtab, &G.ncrules);
	if (!G.rules || !G.crules)
		return -1;
	/* hash-table order depends only on the policy, but sort anyway so the
	 * stream does not depend on libsepol's avtab hash function */
	qsort(G.rules, G.nrules, sizeof(avtab_ptr_t), cmp_avptr);
	qsort(G.crules, G.ncrules, sizeof(avtab_ptr_t), cmp_avptr);
	for (uint32_t i = 0; i < G.nrules + G.ncrules; i++) {
		avtab_ptr_t e = i < G.nrules ? G.rules[i] : G.crules[i - G.nrules];
		uint32_t c = e->key.target_class;
		if (c >= 1 && c <= G.nclasses)
			vec_push(&G.class_rules[c - 1], i);
	}
	if (!G.types.n || !G.nusers || !G.nclasses)
		return -1;
	if (mls_init() || mls_user_init())
		return -1;
	G.ready = 1;
	return 0;
}

static avtab_ptr_t rule_at(uint32_t i)
{
	return i < G.nrules ? G.rules[i] : G.crules[i - G.nrules];
}

static uint32_t random_type(rng_t *r)
{
	return G.types.v[rng_below(r, G.types.n)];
}

/* attribute -> random member type; plain type -> itself */
static uint32_t resolve_type(rng_t *r, uint32_t t)
{
	if (t < 1 || t > G.ntypes)
		return random_type(r);
	type_datum_t *td = pdb.type_val_to_struct[t - 1];
	if (td && td->flavor != TYPE_ATTRIB)
		return t;
	ebitmap_t *m = &pdb.attr_type_map[t - 1];
	uint32_t cnt = 0;
	ebitmap_node_t *node;
	unsigned int bit;
	ebitmap_for_each_positive_bit(m, node, bit) {
		type_datum_t *d = bit < G.ntypes ? pdb.type_val_to_struct[bit] : NULL;
		if (d && d->flavor != TYPE_ATTRIB)
			cnt++;
	}
	if (!cnt)
		return random_type(r);
	uint32_t pick = rng_below(r, cnt);
	ebitmap_for_each_positive_bit(m, node, bit) {
		type_datum_t *d = bit < G.ntypes ? pdb.type_val_to_struct[bit] : NULL;
		if (d && d->flavor != TYPE_ATTRIB) {
			if (pick == 0)
				return bit + 1;
			pick--;
		}
	}
	return random_type(r);
}

static avtab_ptr_t random_rule(rng_t *r)
{
	if (G.ncrules && (rng_pct(r, 40) || !G.nrules))
		return G.crules[rng_below(r, G.ncrules)];
	if (G.nrules)
		return G.rules[rng_below(r, G.nrules)];
	return NULL;
}


/* ---- MLS ---- */
/*
 * Category sets are handled as plain bitsets here (libsepol's ebitmap_and
 * and ebitmap_set_bit are bit-at-a-time and far too slow for generating
 * millions of lines).  Policies with more than MAXCAT categories only get
 * the first MAXCAT used by the generator.
 */

#define MAXCAT 4096
#define CATW (MAXCAT / 64)

typedef struct {
	uint64_t w[CATW];
} catset_t;

typedef struct {
	uint32_t sens[2];
	catset_t cat[2];
} range_t;

static catset_t *sens_cats; /* per sensitivity value-1: allowed categories */

static void cs_from_ebitmap(catset_t *c, const ebitmap_t *e)
{
	memset(c, 0, sizeof(*c));
	for (const ebitmap_node_t *n = e->node; n; n = n->next) {
		uint64_t m = n->map;
		while (m) {
			unsigned b = (unsigned)__builtin_ctzll(m);
			uint32_t bit = n->startbit + b;
			if (bit < MAXCAT)
				c->w[bit / 64] |= 1ULL << (bit % 64);
			m &= m - 1;
		}
	}
}

static void cs_set(catset_t *c, uint32_t bit)
{
	if (bit < MAXCAT)
		c->w[bit / 64] |= 1ULL << (bit % 64);
}

static int cs_get(const catset_t *c, uint32_t bit)
{
	return bit < MAXCAT && ((c->w[bit / 64] >> (bit % 64)) & 1);
}

static void cs_and(catset_t *d, const catset_t *a, const catset_t *b)
{
	for (unsigned i = 0; i < CATW; i++)
		d->w[i] = a->w[i] & b->w[i];
}

static int cs_contains(const catset_t *big, const catset_t *small)
{
	for (unsigned i = 0; i < CATW; i++)
		if (small->w[i] & ~big->w[i])
			return 0;
	return 1;
}

static int cs_eq(const catset_t *a, const catset_t *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* list set bits (ascending) */
static uint32_t cs_list(const catset_t *c, uint32_t *idx, uint32_t max)
{
	uint32_t n = 0;
	for (unsigned i = 0; i < CATW; i++) {
		uint64_t m = c->w[i];
		while (m && n < max) {
			idx[n++] = i * 64 + (uint32_t)__builtin_ctzll(m);
			m &= m - 1;
		}
	}
	return n;
}

/* Fills sens_cats from every non-alias level datum. Walks the table rather
 * than p_sens_val_to_name, whose entries can be NULL in small policies. */
static int mls_init_one(hashtab_key_t key, hashtab_datum_t datum, void *arg)
{
	level_datum_t *l = datum;
	(void)key;
	(void)arg;
	if (l && !l->isalias && l->level && l->level->sens >= 1 &&
	    l->level->sens <= G.nsens)
		cs_from_ebitmap(&sens_cats[l->level->sens - 1], &l->level->cat);
	return 0;
}

static int mls_init(void)
{
	sens_cats = calloc(G.nsens + 1, sizeof(catset_t));
	if (!sens_cats)
		return -1;
	return hashtab_map(pdb.p_levels.table, mls_init_one, NULL);
}

static const catset_t *sens_allowed_cats(uint32_t sens)
{
	if (sens < 1 || sens > G.nsens)
		return NULL;
	return &sens_cats[sens - 1];
}

/* add to dst a random subset of cand (candidates) with a random "shape" */
static void random_cat_subset(rng_t *r, catset_t *dst, const catset_t *cand,
			      int nonempty_bias)
{
	static uint32_t idx[MAXCAT];
	uint32_t n = cs_list(cand, idx, MAXCAT);
	if (!n)
		return;
	uint32_t shape = rng_below(r, 100);
	if (!nonempty_bias && shape < 40)
		return; /* empty */
	if (shape < 55) {
		/* everything */
		for (unsigned i = 0; i < CATW; i++)
			dst->w[i] |= cand->w[i];
	} else if (shape < 80) {
		/* contiguous run of candidates */
		uint32_t a = rng_below(r, n), len = 1 + rng_below(r, n < 16 ? n : 16);
		for (uint32_t i = a; i < n && i < a + len; i++)
			cs_set(dst, idx[i]);
	} else {
		/* a few scattered ones */
		uint32_t k = 1 + rng_below(r, 4);
		for (uint32_t i = 0; i < k; i++)
			cs_set(dst, idx[rng_below(r, n)]);
	}
}

/* A random range inside [low, high] (as for a user's range). */
static void random_range_within(rng_t *r, uint32_t lo, const catset_t *locats,
				uint32_t hi, const catset_t *hicats, range_t *g,
				int nonempty_bias)
{
	static const catset_t empty;
	catset_t cand;
	if (lo < 1)
		lo = 1;
	if (hi < lo)
		hi = lo;
	g->sens[0] = lo + rng_below(r, hi - lo + 1);
	g->sens[1] = g->sens[0] + rng_below(r, hi - g->sens[0] + 1);

	const catset_t *al = sens_allowed_cats(g->sens[0]);
	/* low cats: range's low cats + subset of (range's high cats & allowed) */
	g->cat[0] = *locats;
	cs_and(&cand, hicats, al ? al : &empty);
	random_cat_subset(r, &g->cat[0], &cand, 0);

	const catset_t *ah = sens_allowed_cats(g->sens[1]);
	if (!ah || !cs_contains(ah, &g->cat[0])) {
		g->sens[1] = g->sens[0];
		ah = al;
	}
	g->cat[1] = g->cat[0];
	if (!rng_pct(r, 30) || nonempty_bias) {
		cs_and(&cand, hicats, ah ? ah : &empty);
		random_cat_subset(r, &g->cat[1], &cand, nonempty_bias);
	}
}

static catset_t *user_cats; /* per user value-1: [low, high] */

static int mls_user_init(void)
{
	user_cats = calloc(2 * (size_t)G.nusers + 1, sizeof(catset_t));
	if (!user_cats)
		return -1;
	for (uint32_t u = 1; u <= G.nusers; u++) {
		user_datum_t *ud = pdb.user_val_to_struct[u - 1];
		if (!ud)
			continue;
		cs_from_ebitmap(&user_cats[2 * (u - 1)], &ud->exp_range.level[0].cat);
		cs_from_ebitmap(&user_cats[2 * (u - 1) + 1], &ud->exp_range.level[1].cat);
	}
	return 0;
}

static void random_range_user(rng_t *r, uint32_t u, range_t *g, int nonempty_bias)
{
	user_datum_t *ud = pdb.user_val_to_struct[u - 1];
	random_range_within(r, ud->exp_range.level[0].sens, &user_cats[2 * (u - 1)],
			    ud->exp_range.level[1].sens, &user_cats[2 * (u - 1) + 1],
			    g, nonempty_bias);
}

/* A random well-formed range anywhere (for object_r contexts). */
static void random_range_universe(rng_t *r, range_t *g, int nonempty_bias)
{
	static const catset_t empty;
	uint32_t top = G.nsens ? G.nsens : 1;
	const catset_t *a = sens_allowed_cats(top);
	random_range_within(r, 1, &empty, top, a ? a : &empty, g, nonempty_bias);
}

static int append(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
	va_list ap;
	if (*len >= cap)
		return -1;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= cap - *len) {
		*len = cap;
		return -1;
	}
	*len += (size_t)n;
	return 0;
}

static void fmt_level(rng_t *r, char *buf, size_t cap, size_t *len, uint32_t sens,
		      const catset_t *cats)
{
	static uint32_t idx[MAXCAT];
	append(buf, cap, len, "%s", pdb.p_sens_val_to_name[sens - 1]);
	uint32_t n = cs_list(cats, idx, MAXCAT);
	if (!n)
		return;
	/* style 0: canonical ranges (runs >= 3 with '.'), 1: all commas,
	 * 2: '.' for runs >= 2, 3: commas in shuffled order (short sets) */
	uint32_t style = rng_below(r, 10);
	style = style < 6 ? 0 : style < 7 ? 1 : style < 9 ? 2 : 3;
	if ((style == 1 || style == 3) && n > 64)
		style = 0;
	append(buf, cap, len, ":");
	if (style == 3) {
		for (uint32_t i = n; i > 1; i--) {
			uint32_t j = rng_below(r, i);
			uint32_t t = idx[i - 1];
			idx[i - 1] = idx[j];
			idx[j] = t;
		}
		style = 1;
	}
	if (style == 1) {
		for (uint32_t i = 0; i < n; i++)
			append(buf, cap, len, "%s%s", i ? "," : "",
			       pdb.p_cat_val_to_name[idx[i]]);
		return;
	}
	uint32_t minrun = style == 0 ? 3 : 2;
	int first = 1;
	for (uint32_t i = 0; i < n;) {
		uint32_t j = i;
		while (j + 1 < n && idx[j + 1] == idx[j] + 1)
			j++;
		uint32_t run = j - i + 1;
		if (run >= minrun) {
			append(buf, cap, len, "%s%s.%s", first ? "" : ",",
			       pdb.p_cat_val_to_name[idx[i]],
			       pdb.p_cat_val_to_name[idx[j]]);
		} else {
			for (uint32_t k = i; k <= j; k++)
				append(buf, cap, len, "%s%s", (first && k == i) ? "" : ",",
				       pdb.p_cat_val_to_name[idx[k]]);
		}
		first = 0;
		i = j + 1;
	}
}

static void fmt_range(rng_t *r, char *buf, size_t cap, size_t *len, range_t *g)
{
	fmt_level(r, buf, cap, len, g->sens[0], &g->cat[0]);
	int same = g->sens[0] == g->sens[1] && cs_eq(&g->cat[0], &g->cat[1]);
	if (!same || rng_pct(r, 10)) {
		append(buf, cap, len, "-");
		fmt_level(r, buf, cap, len, g->sens[1], &g->cat[1]);
	}
}

/* ---- contexts ---- */

typedef struct {
	uint32_t user, role, type;
	const char *type_name; /* override (alias), or NULL */
} ctxspec_t;

#define CTX_MAX 8192

/* Build a valid context string for type t. */
static void make_ctx(rng_t *r, uint32_t t, int object_ok, int mls_heavy,
		     uint32_t avoid_user, ctxspec_t *spec, char *out, size_t cap)
{
	vec_t *roles = &G.type_roles[t - 1];
	uint32_t role = OBJECT_R_VAL, user;
	if (roles->n && !(object_ok && rng_pct(r, 60))) {
		role = roles->v[rng_below(r, roles->n)];
		vec_t *us = &G.role_users[role - 1];
		if (!us->n) {
			role = OBJECT_R_VAL;
			user = 1 + rng_below(r, G.nusers);
		} else {
			user = us->v[rng_below(r, us->n)];
			if (avoid_user && user == avoid_user && us->n > 1)
				for (int k = 0; k < 8 && user == avoid_user; k++)
					user = us->v[rng_below(r, us->n)];
		}
	} else {
		user = 1 + rng_below(r, G.nusers);
		if (avoid_user && user == avoid_user && G.nusers > 1)
			user = 1 + (user % G.nusers);
	}
	spec->user = user;
	spec->role = role;
	spec->type = t;
	size_t len = 0;
	const char *tn = spec->type_name ? spec->type_name : pdb.p_type_val_to_name[t - 1];
	append(out, cap, &len, "%s:%s:%s", pdb.p_user_val_to_name[user - 1],
	       pdb.p_role_val_to_name[role - 1], tn);
	if (pdb.mls) {
		static range_t g;
		if (role == OBJECT_R_VAL && rng_pct(r, 30))
			random_range_universe(r, &g, mls_heavy);
		else
			random_range_user(r, user, &g, mls_heavy);
		append(out, cap, &len, ":");
		fmt_range(r, out, cap, &len, &g);
	}
}

static const char *class_name(uint32_t c)
{
	return pdb.p_class_val_to_name[c - 1];
}

static uint32_t class_by_name(const char *n)
{
	class_datum_t *c = hashtab_search(pdb.p_classes.table, n);
	return c ? c->s.value : 0;
}

typedef struct {
	char s[CTX_MAX], t[CTX_MAX];
	const char *cls; /* class name */
	ctxspec_t ss, ts;
	uint32_t stype, ttype, cval;
} line_t;

static void pick_rule_triple(rng_t *r, uint32_t *s, uint32_t *t, uint32_t *c)
{
	avtab_ptr_t e = random_rule(r);
	if (!e) {
		*s = random_type(r);
		*t = random_type(r);
		*c = 1 + rng_below(r, G.nclasses);
		return;
	}
	*s = resolve_type(r, e->key.source_type);
	*t = resolve_type(r, e->key.target_type);
	*c = e->key.target_class;
}

static void build_line(rng_t *r, line_t *L, uint32_t s, uint32_t t, uint32_t c,
		       int mls_heavy, int vary_users, const char *salias,
		       const char *talias)
{
	memset(&L->ss, 0, sizeof(L->ss));
	memset(&L->ts, 0, sizeof(L->ts));
	L->ss.type_name = salias;
	L->ts.type_name = talias;
	make_ctx(r, s, 0, mls_heavy, 0, &L->ss, L->s, sizeof(L->s));
	make_ctx(r, t, 1, mls_heavy, vary_users ? L->ss.user : 0, &L->ts, L->t,
		 sizeof(L->t));
	L->stype = s;
	L->ttype = t;
	L->cval = c;
	L->cls = class_name(c);
}

/* stratum g: random user, role of that user, type of that role */
static int urt_ctx(rng_t *r, char *out, size_t cap, uint32_t *type)
{
	if (!G.users_with_roles.n)
		return -1;
	for (int tries = 0; tries < 16; tries++) {
		uint32_t u = G.users_with_roles.v[rng_below(r, G.users_with_roles.n)];
		vec_t *rs = &G.user_roles[u - 1];
		uint32_t role = rs->v[rng_below(r, rs->n)];
		vec_t *ts = &G.role_types[role - 1];
		if (!ts->n)
			continue;
		uint32_t t = ts->v[rng_below(r, ts->n)];
		size_t len = 0;
		append(out, cap, &len, "%s:%s:%s", pdb.p_user_val_to_name[u - 1],
		       pdb.p_role_val_to_name[role - 1], pdb.p_type_val_to_name[t - 1]);
		if (pdb.mls) {
			static range_t g;
			random_range_user(r, u, &g, 0);
			append(out, cap, &len, ":");
			fmt_range(r, out, cap, &len, &g);
		}
		*type = t;
		return 0;
	}
	return -1;
}

static const char *level_low_str(void)
{
	return G.nsens ? pdb.p_sens_val_to_name[0] : "s0";
}

/* Make an invalid context (or class) in place of one side of L. */
static void corrupt_line(rng_t *r, line_t *L)
{
	int side_t = rng_pct(r, 50);
	char *dst = side_t ? L->t : L->s;
	ctxspec_t *sp = side_t ? &L->ts : &L->ss;
	const char *uname = pdb.p_user_val_to_name[sp->user - 1];
	const char *rname = pdb.p_role_val_to_name[sp->role - 1];
	const char *tname = pdb.p_type_val_to_name[sp->type - 1];
	const char *lvl = level_low_str();
	size_t len = 0;
	static char tmp[CTX_MAX];
	int kind = (int)rng_below(r, 14);

	switch (kind) {
	case 0: /* unknown type */
		snprintf(tmp, sizeof(tmp), "%s:%s:rampart_no_such_type_%u_t:%s", uname,
			 rname, rng_below(r, 1000), lvl);
		break;
	case 1: /* unknown user */
		snprintf(tmp, sizeof(tmp), "rampart_nouser_%u_u:%s:%s:%s",
			 rng_below(r, 1000), rname, tname, lvl);
		break;
	case 2: { /* role not authorized for type */
		for (int k = 0; k < 64; k++) {
			uint32_t role = 1 + rng_below(r, G.nroles);
			if (role == OBJECT_R_VAL || !G.role_users[role - 1].n)
				continue;
			uint32_t t = random_type(r);
			role_datum_t *rd = pdb.role_val_to_struct[role - 1];
			if (role_has_type(rd, t))
				continue;
			vec_t *us = &G.role_users[role - 1];
			uint32_t u = us->v[rng_below(r, us->n)];
			snprintf(tmp, sizeof(tmp), "%s:%s:%s:%s",
				 pdb.p_user_val_to_name[u - 1],
				 pdb.p_role_val_to_name[role - 1],
				 pdb.p_type_val_to_name[t - 1], lvl);
			goto done;
		}
		snprintf(tmp, sizeof(tmp), "%s:%s:rampart_no_such_type_t:%s", uname,
			 rname, lvl);
		break;
	}
	case 3: { /* user not authorized for role */
		for (int k = 0; k < 64; k++) {
			uint32_t role = 1 + rng_below(r, G.nroles);
			if (role == OBJECT_R_VAL || !G.role_types[role - 1].n)
				continue;
			uint32_t u = 1 + rng_below(r, G.nusers);
			user_datum_t *ud = pdb.user_val_to_struct[u - 1];
			if (ebitmap_get_bit(&ud->roles.roles, role - 1))
				continue;
			vec_t *ts = &G.role_types[role - 1];
			uint32_t t = ts->v[rng_below(r, ts->n)];
			snprintf(tmp, sizeof(tmp), "%s:%s:%s:%s",
				 pdb.p_user_val_to_name[u - 1],
				 pdb.p_role_val_to_name[role - 1],
				 pdb.p_type_val_to_name[t - 1], lvl);
			goto done;
		}
		snprintf(tmp, sizeof(tmp), "rampart_nouser_u:%s:%s:%s", rname, tname,
			 lvl);
		break;
	}
	case 4: /* undefined sensitivity */
		snprintf(tmp, sizeof(tmp), "%s:%s:%s:s%u", uname, rname, tname,
			 G.nsens + 90 + rng_below(r, 10));
		break;
	case 5: /* category out of range */
		snprintf(tmp, sizeof(tmp), "%s:%s:%s:%s:c%u", uname, rname, tname, lvl,
			 G.ncats + rng_below(r, 100));
		break;
	case 6: /* high does not dominate low */
		if (G.ncats >= 2)
			snprintf(tmp, sizeof(tmp), "%s:%s:%s:%s:%s,%s-%s:%s", uname, rname,
				 tname, lvl, pdb.p_cat_val_to_name[0],
				 pdb.p_cat_val_to_name[1], lvl, pdb.p_cat_val_to_name[0]);
		else if (G.nsens >= 2)
			snprintf(tmp, sizeof(tmp), "%s:%s:%s:%s-%s", uname, rname, tname,
				 pdb.p_sens_val_to_name[1], lvl);
		else
			snprintf(tmp, sizeof(tmp), "%s:%s:%s:%s-s%u", uname, rname, tname,
				 lvl, G.nsens + 95);
		break;
	case 7: /* attribute used as a type */
		if (G.attrs.n) {
			uint32_t a = G.attrs.v[rng_below(r, G.attrs.n)];
			snprintf(tmp, sizeof(tmp), "%s:%s:%s:%s", uname, rname,
				 pdb.p_type_val_to_name[a - 1], lvl);
		} else {
			snprintf(tmp, sizeof(tmp), "%s:%s:rampart_attr_t:%s", uname, rname,
				 lvl);
		}
		break;
	case 8: { /* malformed */
		static const char *const bad[] = {
			"a:b", "system_u", "::", ":::", "u:r", "%s:%s:%s:",
			"%s:%s:%s", "%s:%s:%s:%s:", "%s:%s:%s:%s-", "%s::%s:%s",
			":%s:%s:%s", "%s:%s::%s",
		};
		const char *f = bad[rng_below(r, sizeof(bad) / sizeof(bad[0]))];
		if (strstr(f, "%s:%s:%s:%s"))
			snprintf(tmp, sizeof(tmp), f, uname, rname, tname, lvl);
		else if (!strcmp(f, "%s::%s:%s"))
			snprintf(tmp, sizeof(tmp), f, uname, tname, lvl);
		else if (!strcmp(f, ":%s:%s:%s") || !strcmp(f, "%s:%s::%s"))
			snprintf(tmp, sizeof(tmp), f, rname, tname, lvl);
		else if (strstr(f, "%s"))
			snprintf(tmp, sizeof(tmp), f, uname, rname, tname);
		else
			snprintf(tmp, sizeof(tmp), "%s", f);
		break;
	}
	case 9: /* unknown class */
		L->cls = "rampart_no_such_class";
		return;
	case 10: { /* MLS range outside the user's range (non-object_r role) */
		for (int k = 0; k < 64; k++) {
			if (!G.users_with_roles.n)
				break;
			uint32_t u = G.users_with_roles.v[rng_below(r, G.users_with_roles.n)];
			user_datum_t *ud = pdb.user_val_to_struct[u - 1];
			/* pick a category not in the user's clearance */
			uint32_t cat = rng_below(r, G.ncats ? G.ncats : 1);
			if (!G.ncats || ebitmap_get_bit(&ud->exp_range.level[1].cat, cat))
				continue;
			const catset_t *al = sens_allowed_cats(ud->exp_range.level[1].sens);
			if (!al || !cs_get(al, cat))
				continue;
			vec_t *rs = &G.user_roles[u - 1];
			uint32_t role = rs->v[rng_below(r, rs->n)];
			vec_t *ts = &G.role_types[role - 1];
			if (!ts->n)
				continue;
			uint32_t t = ts->v[rng_below(r, ts->n)];
			snprintf(tmp, sizeof(tmp), "%s:%s:%s:%s:%s",
				 pdb.p_user_val_to_name[u - 1],
				 pdb.p_role_val_to_name[role - 1],
				 pdb.p_type_val_to_name[t - 1],
				 pdb.p_sens_val_to_name[ud->exp_range.level[1].sens - 1],
				 pdb.p_cat_val_to_name[cat]);
			goto done;
		}
		snprintf(tmp, sizeof(tmp), "%s:%s:%s:s%u", uname, rname, tname,
			 G.nsens + 90);
		break;
	}
	case 11: /* reversed category range */
		if (G.ncats >= 6)
			snprintf(tmp, sizeof(tmp), "%s:%s:%s:%s:%s.%s", uname, rname, tname,
				 lvl, pdb.p_cat_val_to_name[5], pdb.p_cat_val_to_name[2]);
		else
			snprintf(tmp, sizeof(tmp), "%s:%s:%s:%s:cX", uname, rname, tname,
				 lvl);
		break;
	case 12: /* unknown role */
		snprintf(tmp, sizeof(tmp), "%s:rampart_norole_%u_r:%s:%s", uname,
			 rng_below(r, 1000), tname, lvl);
		break;
	default: /* class value / name typo: drop the last character */
	{
		size_t n = strlen(L->cls);
		static char cbuf[256];
		if (n > 1 && n < sizeof(cbuf)) {
			memcpy(cbuf, L->cls, n - 1);
			cbuf[n - 1] = 0;
			if (!hashtab_search(pdb.p_classes.table, cbuf)) {
				L->cls = cbuf;
				return;
			}
		}
		L->cls = "rampart_no_such_class";
		return;
	}
	}
done:
	(void)len;
	snprintf(dst, CTX_MAX, "%s", tmp);
}

static int gen_stream(uint64_t seed, uint64_t count)
{
	if (gen_init()) {
		printf("error: generator init failed\n");
		return -1;
	}
	rng_t r;
	/* decorrelate from bools-random with the same seed */
	rng_seed(&r, seed ^ 0xD1B54A32D192ED03ULL);
	uint32_t c_process = class_by_name("process");
	uint32_t c_file = class_by_name("file");
	uint32_t c_dir = class_by_name("dir");
	static line_t L;
	uint64_t stratum = 0;
	G.fclass = 0;
	/* invalid-line rate in permille (default 30 = 3%); the environment
	 * variable SEPOL_ORACLE_INVALID_PERMILLE overrides it (0..1000) */
	uint32_t permille = 30;
	const char *ev = getenv("SEPOL_ORACLE_INVALID_PERMILLE");
	uint64_t evv;
	if (ev && !parse_u64(ev, &evv) && evv <= 1000)
		permille = (uint32_t)evv;
	for (uint64_t i = 0; i < count; i++) {
		int invalid = rng_below(&r, 1000) < permille;
		uint32_t s, t, c;
		int k = (int)(stratum++ % 7);
		if (invalid)
			k = (int)rng_below(&r, 2); /* base the bad line on a or b */
		switch (k) {
		case 0: /* a. rule-guided */
			pick_rule_triple(&r, &s, &t, &c);
			build_line(&r, &L, s, t, c, 0, 0, NULL, NULL);
			break;
		case 1: /* b. random pairs */
			s = random_type(&r);
			t = random_type(&r);
			c = 1 + rng_below(&r, G.nclasses);
			build_line(&r, &L, s, t, c, 0, 0, NULL, NULL);
			break;
		case 2: { /* c. constraint-heavy: process/file/dir, varied users */
			uint32_t cs[3] = {c_process, c_file, c_dir};
			c = cs[rng_below(&r, 3)];
			if (!c)
				c = 1 + rng_below(&r, G.nclasses);
			vec_t *cr = &G.class_rules[c - 1];
			if (cr->n && rng_pct(&r, 85)) {
				avtab_ptr_t e = rule_at(cr->v[rng_below(&r, cr->n)]);
				s = resolve_type(&r, e->key.source_type);
				t = resolve_type(&r, e->key.target_type);
			} else {
				s = random_type(&r);
				t = random_type(&r);
			}
			build_line(&r, &L, s, t, c, rng_pct(&r, 30), 1, NULL, NULL);
			break;
		}
		case 3: /* d. MLS-heavy */
			if (rng_pct(&r, 75)) {
				pick_rule_triple(&r, &s, &t, &c);
			} else {
				s = random_type(&r);
				t = random_type(&r);
				c = 1 + rng_below(&r, G.nclasses);
			}
			build_line(&r, &L, s, t, c, 1, rng_pct(&r, 50), NULL, NULL);
			break;
		case 4: { /* e. aliases */
			const char *sa = NULL, *ta = NULL;
			pick_rule_triple(&r, &s, &t, &c);
			if (G.naliases) {
				vec_t *as = &G.type_aliases[s - 1], *at = &G.type_aliases[t - 1];
				if (as->n && rng_pct(&r, 70))
					sa = G.aliases[as->v[rng_below(&r, as->n)]].name;
				if (at->n && rng_pct(&r, 70))
					ta = G.aliases[at->v[rng_below(&r, at->n)]].name;
				if (!sa && !ta) {
					alias_t *a = &G.aliases[rng_below(&r, G.naliases)];
					if (rng_pct(&r, 50)) {
						s = a->value;
						sa = a->name;
					} else {
						t = a->value;
						ta = a->name;
					}
				}
			}
			build_line(&r, &L, s, t, c, 0, 0, sa, ta);
			break;
		}
		case 5: { /* f. every class, in order */
			c = 1 + (G.fclass++ % G.nclasses);
			vec_t *cr = &G.class_rules[c - 1];
			if (cr->n && rng_pct(&r, 80)) {
				avtab_ptr_t e = rule_at(cr->v[rng_below(&r, cr->n)]);
				s = resolve_type(&r, e->key.source_type);
				t = resolve_type(&r, e->key.target_type);
			} else {
				s = random_type(&r);
				t = random_type(&r);
			}
			build_line(&r, &L, s, t, c, 0, 0, NULL, NULL);
			break;
		}
		default: { /* g. users and roles */
			uint32_t st, tt;
			c = 1 + rng_below(&r, G.nclasses);
			if (urt_ctx(&r, L.s, sizeof(L.s), &st)) {
				s = random_type(&r);
				t = random_type(&r);
				build_line(&r, &L, s, t, c, 0, 1, NULL, NULL);
				break;
			}
			if (rng_pct(&r, 50)) {
				if (urt_ctx(&r, L.t, sizeof(L.t), &tt))
					snprintf(L.t, sizeof(L.t), "%s", L.s);
			} else {
				ctxspec_t ts = {0};
				tt = random_type(&r);
				make_ctx(&r, tt, 1, 0, 0, &ts, L.t, sizeof(L.t));
			}
			L.cls = class_name(c);
			break;
		}
		}
		if (invalid)
			corrupt_line(&r, &L);
		printf("%s %s %s\n", L.s, L.t, L.cls);
	}
	return 0;
}

static void cmd_gen(char **tok, int n)
{
	uint64_t seed, count;
	if (n != 3 || parse_u64(tok[1], &seed) || parse_u64(tok[2], &count)) {
		printf("error: usage: gen SEED COUNT\n");
		return;
	}
	gen_stream(seed, count);
}

/* ------------------------------------------------------------------ */
/* modes                                                               */

static int serve(void)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;
	char *tok[8];
	while ((got = getline(&line, &cap, stdin)) >= 0) {
		int n = split_ws(line, tok, 6);
		if (n == 0)
			continue;
		const char *c = tok[0];
		if (n > 6) {
			printf("error: too many arguments\n");
		} else if (!strcmp(c, "q")) {
			cmd_query(tok, n, 0);
		} else if (!strcmp(c, "qv")) {
			cmd_query(tok, n, 1);
		} else if (!strcmp(c, "create")) {
			cmd_compute_sid(tok, n, 0);
		} else if (!strcmp(c, "member")) {
			cmd_compute_sid(tok, n, 1);
		} else if (!strcmp(c, "change")) {
			cmd_compute_sid(tok, n, 2);
		} else if (!strcmp(c, "genfs")) {
			cmd_genfs(tok, n);
		} else if (!strcmp(c, "bool")) {
			cmd_bool(tok, n);
		} else if (!strcmp(c, "commit")) {
			commit_bools();
			printf("ok\n");
		} else if (!strcmp(c, "bools-all")) {
			cmd_bools_all(tok, n);
		} else if (!strcmp(c, "bools-default")) {
			cmd_bools_default();
		} else if (!strcmp(c, "bools-random")) {
			cmd_bools_random(tok, n);
		} else if (!strcmp(c, "bools")) {
			cmd_bools_list();
		} else if (!strcmp(c, "perms")) {
			cmd_perms(tok, n);
		} else if (!strcmp(c, "gen")) {
			cmd_gen(tok, n);
		} else if (!strcmp(c, "ping")) {
			printf("pong\n");
		} else if (!strcmp(c, "sync")) {
			fflush(stdout);
		} else {
			printf("error: unknown command %s\n", c);
		}
	}
	free(line);
	fflush(stdout);
	return 0;
}

static int mode_time_load(const char *path, const char *nstr)
{
	uint64_t n;
	char *data;
	size_t len;
	if (parse_u64(nstr, &n) || n == 0 || n > 100000) {
		fprintf(stderr, "sepol-oracle: bad count %s\n", nstr);
		return 2;
	}
	if (read_file(path, &data, &len)) {
		fprintf(stderr, "sepol-oracle: cannot read %s\n", path);
		return 1;
	}
	uint64_t *t = calloc(n, sizeof(uint64_t));
	if (!t)
		return 1;
	for (uint64_t i = 0; i < n; i++) {
		policydb_t p;
		uint64_t a = now_ns();
		int rc = load_policydb_mem(&p, data, len);
		uint64_t b = now_ns();
		if (rc) {
			fprintf(stderr, "sepol-oracle: policydb_read failed\n");
			return 1;
		}
		t[i] = b - a;
		policydb_destroy(&p);
	}
	uint64_t med = median_u64(t, n);
	printf("median_ns=%llu min_ns=%llu loads=%llu bytes=%zu\n",
	       (unsigned long long)med, (unsigned long long)t[0],
	       (unsigned long long)n, len);
	free(t);
	free(data);
	return 0;
}

typedef struct {
	sepol_security_id_t s, t;
	sepol_security_class_t c;
} tq_t;

static int mode_time_av(const char *policy, const char *qfile)
{
	if (load_policy(policy))
		return 1;
	FILE *f = fopen(qfile, "r");
	if (!f) {
		fprintf(stderr, "sepol-oracle: cannot open %s\n", qfile);
		return 1;
	}
	/* Queries are processed in chunks so that libsepol's linear-scan
	 * sidtab stays small (SID lookup cost in compute_av is then O(1)-ish,
	 * like the kernel's). */
	enum { CHUNK = 250, REPS = 5 };
	tq_t q[CHUNK];
	uint64_t tot[REPS] = {0};
	uint64_t nq = 0, nerr = 0, lines = 0, sink = 0;
	char *line = NULL;
	size_t cap = 0;
	int eof = 0;
	while (!eof) {
		unsigned k = 0;
		sid_reset();
		while (k < CHUNK) {
			if (getline(&line, &cap, f) < 0) {
				eof = 1;
				break;
			}
			char *tok[4];
			char err[600];
			int n = split_ws(line, tok, 3);
			if (n == 0)
				continue;
			lines++;
			if (n != 3 || ctx_to_sid(tok[0], &q[k].s, err, sizeof(err)) ||
			    ctx_to_sid(tok[1], &q[k].t, err, sizeof(err)) ||
			    lookup_class(tok[2], 0, &q[k].c, err, sizeof(err))) {
				nerr++;
				continue;
			}
			k++;
		}
		for (int rep = 0; rep < REPS; rep++) {
			uint64_t a = now_ns();
			for (unsigned i = 0; i < k; i++) {
				struct sepol_av_decision avd;
				sepol_compute_av(q[i].s, q[i].t, q[i].c, 0, &avd);
				sink += avd.allowed;
			}
			tot[rep] += now_ns() - a;
		}
		nq += k;
	}
	free(line);
	fclose(f);
	uint64_t per[REPS];
	for (int i = 0; i < REPS; i++)
		per[i] = nq ? tot[i] / nq : 0;
	uint64_t med = median_u64(per, REPS);
	printf("median_ns_per_query=%llu queries=%llu invalid_lines=%llu reps=%d "
	       "(checksum %llu)\n",
	       (unsigned long long)med, (unsigned long long)nq,
	       (unsigned long long)nerr, REPS, (unsigned long long)(sink & 0xffff));
	(void)lines;
	return 0;
}

static long vmrss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char buf[256];
	long v = -1;
	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, "VmRSS:", 6)) {
			v = strtol(buf + 6, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static int mode_rss(const char *path)
{
	long before = vmrss_kib();
	if (load_policy(path))
		return 1;
	long after = vmrss_kib();
	printf("vmrss_before_kib=%ld vmrss_after_kib=%ld delta_kib=%ld\n", before,
	       after, after - before);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: sepol-oracle POLICYFILE   (commands on stdin)\n"
		"       sepol-oracle --time-load POLICYFILE N\n"
		"       sepol-oracle --time-av POLICYFILE QUERYFILE\n"
		"       sepol-oracle --rss POLICYFILE\n"
		"       sepol-oracle --gen POLICYFILE SEED COUNT\n");
}

int main(int argc, char **argv)
{
	static char outbuf[1 << 16];
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	/* Route libsepol's messages (which may go to stdout by default) to our
	 * capture callback; they never reach the protocol stream. */
	sepol_msg_set_callback(&sepol_compat_handle, msg_cb, NULL);

	int rc;
	if (argc == 4 && !strcmp(argv[1], "--time-load")) {
		rc = mode_time_load(argv[2], argv[3]);
	} else if (argc == 4 && !strcmp(argv[1], "--time-av")) {
		rc = mode_time_av(argv[2], argv[3]);
	} else if (argc == 3 && !strcmp(argv[1], "--rss")) {
		rc = mode_rss(argv[2]);
	} else if (argc == 5 && !strcmp(argv[1], "--gen")) {
		uint64_t seed, count;
		if (parse_u64(argv[3], &seed) || parse_u64(argv[4], &count)) {
			usage();
			return 2;
		}
		if (load_policy(argv[2]))
			return 1;
		rc = gen_stream(seed, count) ? 1 : 0;
	} else if (argc == 2 && argv[1][0] != '-') {
		if (load_policy(argv[1]))
			return 1;
		rc = serve();
	} else {
		usage();
		return 2;
	}
	fflush(stdout);
	return rc;
}
