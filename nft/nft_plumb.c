/*
 * nft_plumb: the nft module's public face. Start and stop, the address
 * pool, plumbing a cage (synchronous, on the loop), and the teardown worker.
 *
 * Teardown costs ~40 ms of waiting in the kernel (link deletion and the
 * nf_tables commit both wait for RCU grace periods), so the loop only
 * queues it. The worker deletes the links one by one, then all their set
 * elements in one transaction, and hands the jobs back through an eventfd;
 * the loop then returns the addresses to the pool. The pool and `pending`
 * belong to the loop thread; the queues are shared under `mtx`.
 *
 * Every cage has an element in set cages; a transparent one (when the
 * table has a transparent port) also one in set transparent, added in the
 * same transaction, and one in set open when its allowlist has CIDR
 * patterns. Deleting an element that is not there fails the whole
 * transaction (ENOENT), so the pool's per-address flags remember which
 * sets hold the cage, and teardown deletes just what was added.
 *
 * Set pins holds (host link index . address) for the addresses a
 * transparent cage's DNS answers gave it, each with a timeout that the
 * daemon renews by adding it again (0.1 ms; nothing waits for RCU). Keyed
 * by the link's index, which the kernel does not hand out again soon, a
 * cage's pins never apply to a later cage with its address: they just
 * time out. A kernel that cannot renew a timeout (checked at start) would
 * drop pins still in use, so there every transparent cage goes in set
 * open instead (its connections are accepted and checked by the listener,
 * and refused ones reset); GK_NFT_PINS=off in the environment asks for
 * that on any kernel.
 */
#include <sys/eventfd.h>
#include <sys/queue.h>
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <libnftnl/batch.h>
#include <netlink/socket.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_thread.h"
#include "gatekeeper/base/gk_time.h"
#include "nft/nft_int.h"

#define NFT_STOP_WAIT_S		10	/* nft_plumb_free waits this long */
#define NFT_JOBS_PER_ROUND	256	/* elements per delete transaction */

struct nft_job {
	TAILQ_ENTRY(nft_job)	 entry;
	struct nft_elem		 el;
	bool			 has_elem;	/* false: undo of a failed up */
	bool			 ok;		/* worker: teardown complete */
};
TAILQ_HEAD(nft_jobq, nft_job);

struct nft_plumb {
	struct nft_conf		 conf;
	struct nft_pool		*pool;
	struct nft_mnl		 mnl;		/* loop: element adds */
	struct nl_sock		*sk;		/* loop: links, host netns */
	struct event		*done_ev;
	int			 efd;		/* worker -> loop wakeup */
	size_t			 pending;	/* jobs not yet back (loop) */
	bool			 pins_ok;	/* the kernel renews timeouts */

	pthread_mutex_t		 mtx;
	pthread_cond_t		 cond;
	pthread_t		 worker;
	bool			 worker_started;
	bool			 stopping;	/* under mtx */
	uint64_t		 deadline;	/* gk_clock_ms(); under mtx,
						   once stopping */
	struct nft_jobq		 todo;		/* under mtx */
	struct nft_jobq		 done;		/* under mtx */
	struct nft_mnl		 wmnl;		/* worker's own sockets */
	struct nl_sock		*wsk;
};

static const char *
ntop(struct in_addr a, char *buf)
{
	return inet_ntop(AF_INET, &a, buf, INET_ADDRSTRLEN);
}

/*
 * Add or delete set elements in one transaction: in set `set` only, or
 * with set NULL in cages and (those with .transparent) in transparent.
 * 0, or -1 with err.
 */
static int
elems_update(struct nft_mnl *m, const char *set, bool add,
    const struct nft_elem *el, size_t n, char *err, size_t errlen)
{
	struct nftnl_batch *b;
	int rc;

	if ((b = nft_batch_new(&m->seq)) == NULL ||
	    (set == NULL ? nft_batch_elems(b, add, el, n, &m->seq) :
	    nft_batch_set_elems(b, set, add, el, n, &m->seq)) == -1 ||
	    nft_batch_end(b, &m->seq) == -1) {
		gk_seterr(err, errlen, "nftables: building a batch: out of "
		    "memory");
		if (b != NULL)
			nftnl_batch_free(b);
		errno = ENOMEM;
		return -1;
	}
	rc = nft_mnl_batch(m, b, err, errlen);
	nftnl_batch_free(b);
	return rc;
}

static bool
past(const uint64_t *deadline)
{
	return gk_clock_ms() >= *deadline;
}

/* Element deletes after a failed transaction: one by one, each set on
 * its own, so that an element already gone spoils nothing else. */
static void
elems_one_by_one(struct nft_mnl *m, struct nft_job **jobs, size_t n)
{
	static const char *const sets[] = { NFT_SET, NFT_SET_TP, NFT_SET_OPEN };
	char err[256];
	size_t i, k;

	for (i = 0; i < n; i++) {
		for (k = 0; k < sizeof(sets) / sizeof(sets[0]); k++) {
			if ((k == 1 && !jobs[i]->el.transparent) ||
			    (k == 2 && !jobs[i]->el.open))
				continue;
			if (elems_update(m, sets[k], false, &jobs[i]->el, 1,
			    err, sizeof(err)) == 0)
				continue;
			if (errno == ENOENT)
				continue; /* already gone: that is the goal */
			log_warnx("cage %s: %s", jobs[i]->el.ifname, err);
			jobs[i]->ok = false;
		}
	}
}

/* Tear the jobs down: links first, then their elements together. */
static void
run_jobs(struct nft_mnl *m, struct nl_sock *sk, struct nft_job **jobs,
    size_t n, const uint64_t *deadline)
{
	struct nft_elem el[NFT_JOBS_PER_ROUND];
	struct nft_job *ej[NFT_JOBS_PER_ROUND];
	char err[256];
	size_t i, ne = 0;

	for (i = 0; i < n; i++) {
		if (deadline != NULL && past(deadline)) {
			/* Give up; nft_plumb_free sweeps up after us. */
			for (i = 0; i < n; i++)
				jobs[i]->ok = false;
			return;
		}
		jobs[i]->ok = nft_link_del(sk, jobs[i]->el.ifname, err,
		    sizeof(err)) != -1;
		if (!jobs[i]->ok)
			log_warnx("cage %s: %s", jobs[i]->el.ifname, err);
		/* Delete the element even if the link stayed: fail closed. */
		if (jobs[i]->has_elem) {
			el[ne] = jobs[i]->el;
			ej[ne++] = jobs[i];
		}
	}
	if (ne == 0 || elems_update(m, NULL, false, el, ne, err,
	    sizeof(err)) == 0)
		return;
	log_debug("deleting %zu set elements at once: %s; one by one now",
	    ne, err);
	elems_one_by_one(m, ej, ne);
}

static void
wake_loop(struct nft_plumb *p)
{
	uint64_t one = 1;

	if (write(p->efd, &one, sizeof(one)) == -1 && errno != EAGAIN)
		log_warn("eventfd");
}

static void *
worker_main(void *arg)
{
	struct nft_plumb *p = arg;
	struct nft_job *jobs[NFT_JOBS_PER_ROUND];
	uint64_t deadline;
	bool stopping;
	size_t i, n;

	pthread_mutex_lock(&p->mtx);
	for (;;) {
		while (TAILQ_EMPTY(&p->todo) && !p->stopping)
			pthread_cond_wait(&p->cond, &p->mtx);
		stopping = p->stopping;
		deadline = p->deadline;
		if (TAILQ_EMPTY(&p->todo) || (stopping && past(&deadline)))
			break;
		for (n = 0; n < NFT_JOBS_PER_ROUND &&
		    !TAILQ_EMPTY(&p->todo); n++) {
			jobs[n] = TAILQ_FIRST(&p->todo);
			TAILQ_REMOVE(&p->todo, jobs[n], entry);
		}
		pthread_mutex_unlock(&p->mtx);
		run_jobs(&p->wmnl, p->wsk, jobs, n, stopping ? &deadline :
		    NULL);
		pthread_mutex_lock(&p->mtx);
		for (i = 0; i < n; i++)
			TAILQ_INSERT_TAIL(&p->done, jobs[i], entry);
		wake_loop(p);
	}
	pthread_mutex_unlock(&p->mtx);
	return NULL;
}

/* Loop: teardowns came back. Free their addresses (if complete). */
static void
done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct nft_plumb *p = arg;
	struct nft_jobq q = TAILQ_HEAD_INITIALIZER(q);
	struct nft_job *j;
	char a[INET_ADDRSTRLEN];
	uint64_t v;

	(void)what;
	(void)!read(fd, &v, sizeof(v));
	pthread_mutex_lock(&p->mtx);
	TAILQ_CONCAT(&q, &p->done, entry);
	pthread_mutex_unlock(&p->mtx);
	while ((j = TAILQ_FIRST(&q)) != NULL) {
		TAILQ_REMOVE(&q, j, entry);
		p->pending--;
		if (j->ok)
			nft_pool_drained(p->pool, j->el.addr);
		else
			log_warnx("cage %s: teardown incomplete; address %s "
			    "stays out of the pool", j->el.ifname,
			    ntop(j->el.addr, a));
		free(j);
	}
}

/*
 * Hand a teardown to the worker; the address drains until it is done.
 * has_elem: delete the set elements too (those of the sets the pool's
 * flags name).
 */
static void
queue_job(struct nft_plumb *p, const char *ifname, struct in_addr cage,
    bool has_elem)
{
	struct nft_job *j, stack;

	if ((j = calloc(1, sizeof(*j))) == NULL) {
		/* Rare: do it here, slowly, rather than leak the cage. */
		log_warn("cage %s: queueing the teardown", ifname);
		memset(&stack, 0, sizeof(stack));
		j = &stack;
	}
	snprintf(j->el.ifname, sizeof(j->el.ifname), "%s", ifname);
	j->el.addr = cage;
	j->el.transparent = nft_pool_flag(p->pool, cage, NFT_POOL_F_TP);
	j->el.open = nft_pool_flag(p->pool, cage, NFT_POOL_F_OPEN);
	j->has_elem = has_elem;
	nft_pool_drain(p->pool, cage);
	p->pending++;
	if (j == &stack) {
		run_jobs(&p->mnl, p->sk, &j, 1, NULL);
		p->pending--;
		if (j->ok)
			nft_pool_drained(p->pool, cage);
		return;
	}
	pthread_mutex_lock(&p->mtx);
	TAILQ_INSERT_TAIL(&p->todo, j, entry);
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->mtx);
}

int
nft_addr_alloc(struct nft_plumb *p, struct in_addr *out)
{
	return nft_pool_alloc(p->pool, out);
}

size_t
nft_plumb_pending(const struct nft_plumb *p)
{
	return p->pending;
}

struct cage_enter {
	struct nl_sock	*sk;
	int		 lo;
	int		 eth0;
};

/* Inside the cage: IPv6 off, link indexes, an rtnetlink socket there. */
static int
cage_enter_cb(void *arg, char *err, size_t errlen)
{
	struct cage_enter *ce = arg;

	if (nft_link_cage_sysctls(err, errlen) == -1 ||
	    nft_link_index("lo", &ce->lo, err, errlen) == -1 ||
	    nft_link_index(NFT_CAGE_IFNAME, &ce->eth0, err, errlen) == -1)
		return -1;
	ce->sk = nft_link_sock(err, errlen);
	return ce->sk != NULL ? 0 : -1;
}

static int
cage_side(struct nft_plumb *p, int nsfd, struct in_addr cage, char *err,
    size_t errlen)
{
	struct cage_enter ce = { NULL };
	int rc;

	if (nft_netns_run(nsfd, cage_enter_cb, &ce, err, errlen) == -1) {
		if (ce.sk != NULL)
			nl_socket_free(ce.sk);
		return -1;
	}
	rc = nft_link_cage_setup(ce.sk, ce.lo, ce.eth0, p->conf.gateway, cage,
	    err, errlen);
	nl_socket_free(ce.sk);
	return rc;
}

int
nft_cage_up(struct nft_plumb *p, int nsfd, const char *ifname,
    struct in_addr cage, bool transparent, bool open, uint32_t *ifindex,
    char *err, size_t errlen)
{
	struct nft_elem el;
	char a[INET_ADDRSTRLEN];
	int idx;

	if (nft_pool_state(p->pool, cage) != NFT_POOL_USED) {
		gk_seterr(err, errlen, "cage address %s was not allocated",
		    ntop(cage, a));
		return -1;
	}
	if (!nft_ifname_valid(ifname)) {
		gk_seterr(err, errlen, "invalid cage link name \"%s\" (\"%s\" "
		    "and 1 to %zu of A-Z a-z 0-9 _ -)", ifname,
		    NFT_IFNAME_PREFIX, NFT_IFNAMSIZ - 1 -
		    strlen(NFT_IFNAME_PREFIX));
		goto fail_free;
	}
	/* Cheap insurance: never configure the host as if it were a cage. */
	if (nft_netns_is_own(nsfd)) {
		gk_seterr(err, errlen, "cage %s: the namespace fd is our own "
		    "network namespace", ifname);
		goto fail_free;
	}
	if (nft_link_veth_add(p->sk, ifname, nsfd, err, errlen) == -1)
		goto fail_free;
	if (nft_link_host_setup(p->sk, ifname, p->conf.gateway, cage, err,
	    errlen) == -1 || nft_link_index(ifname, &idx, err, errlen) == -1 ||
	    cage_side(p, nsfd, cage, err, errlen) == -1)
		goto fail_undo;
	memset(&el, 0, sizeof(el));
	snprintf(el.ifname, sizeof(el.ifname), "%s", ifname);
	el.addr = cage;
	/* Without a transparent port there is no redirect to join. */
	el.transparent = transparent && p->conf.transparent_port != 0;
	el.open = el.transparent && (open || !p->pins_ok);
	/* The flags first: a failed add is undone set by set. */
	nft_pool_set_flag(p->pool, cage, NFT_POOL_F_TP, el.transparent);
	nft_pool_set_flag(p->pool, cage, NFT_POOL_F_OPEN, el.open);
	if (elems_update(&p->mnl, NULL, true, &el, 1, err, errlen) == -1) {
		/* Not acknowledged is not proof of absence: delete them
		 * too (missing elements are fine then). */
		queue_job(p, ifname, cage, true);
		return -1;
	}
	*ifindex = (uint32_t)idx;
	log_debug("cage %s: %s plumbed%s%s", ifname, ntop(cage, a),
	    el.transparent ? ", transparent" : "", el.open ? ", open" : "");
	return 0;

fail_free:
	nft_pool_release(p->pool, cage);
	return -1;
fail_undo:
	queue_job(p, ifname, cage, false);
	return -1;
}

int
nft_cage_open(struct nft_plumb *p, const char *ifname, struct in_addr cage,
    char *err, size_t errlen)
{
	struct nft_elem el;

	if (nft_pool_state(p->pool, cage) != NFT_POOL_USED ||
	    !nft_pool_flag(p->pool, cage, NFT_POOL_F_TP) ||
	    nft_pool_flag(p->pool, cage, NFT_POOL_F_OPEN))
		return 0;
	memset(&el, 0, sizeof(el));
	snprintf(el.ifname, sizeof(el.ifname), "%s", ifname);
	el.addr = cage;
	/* Flag first: if the add's answer is lost, teardown tries both. */
	nft_pool_set_flag(p->pool, cage, NFT_POOL_F_OPEN, true);
	if (elems_update(&p->mnl, NFT_SET_OPEN, true, &el, 1, err,
	    errlen) == -1 && errno != EEXIST)
		return -1;
	return 0;
}

/* Add (or renew) one element of set pins, or delete it (!add). */
static int
pin_op(struct nft_plumb *p, bool add, uint32_t ifindex, struct in_addr addr,
    uint32_t seconds, char *err, size_t errlen)
{
	struct nft_pin pin = { ifindex, addr, (uint64_t)seconds * 1000 };
	struct nftnl_batch *b;
	int rc;

	if ((b = nft_batch_new(&p->mnl.seq)) == NULL ||
	    nft_batch_pins(b, add, &pin, 1, &p->mnl.seq) == -1 ||
	    nft_batch_end(b, &p->mnl.seq) == -1) {
		gk_seterr(err, errlen, "nftables: building a batch: out of "
		    "memory");
		if (b != NULL)
			nftnl_batch_free(b);
		return -1;
	}
	rc = nft_mnl_batch(&p->mnl, b, err, errlen);
	nftnl_batch_free(b);
	return rc;
}

int
nft_cage_pin(struct nft_plumb *p, uint32_t ifindex, struct in_addr addr,
    uint32_t seconds, char *err, size_t errlen)
{
	if (!p->pins_ok)
		return 0;		/* the cages are open instead */
	return pin_op(p, true, ifindex, addr, seconds, err, errlen);
}

int
nft_cage_unpin(struct nft_plumb *p, uint32_t ifindex, struct in_addr addr,
    char *err, size_t errlen)
{
	if (!p->pins_ok)
		return 0;
	if (pin_op(p, false, ifindex, addr, 0, err, errlen) == -1 &&
	    errno != ENOENT)
		return -1;
	return 0;	/* deleted, or lapsed meanwhile */
}

/*
 * Can this kernel renew an element's timeout by adding it again (Linux
 * 6.10 and later)? Try it on an element no packet can match (link index
 * 0), then delete it.
 */
static bool
pins_probe(struct nft_plumb *p)
{
	struct in_addr none = { htonl(INADDR_LOOPBACK) };
	struct nft_pin pin = { 0, none, 0 };
	struct nftnl_batch *b;
	char err[256];
	uint64_t left = 0;
	bool ok = false;

	if (pin_op(p, true, 0, none, 2, err, sizeof(err)) == -1 ||
	    pin_op(p, true, 0, none, 3600, err, sizeof(err)) == -1 ||
	    nft_mnl_pin_expires(&p->mnl, 0, none, &left, err,
	    sizeof(err)) == -1) {
		log_warnx("nft: checking set %s: %s", NFT_SET_PINS, err);
		left = 0;
	}
	ok = left > 60 * 1000;
	if ((b = nft_batch_new(&p->mnl.seq)) != NULL &&
	    nft_batch_pins(b, false, &pin, 1, &p->mnl.seq) == 0 &&
	    nft_batch_end(b, &p->mnl.seq) == 0)
		(void)nft_mnl_batch(&p->mnl, b, err, sizeof(err));
	if (b != NULL)
		nftnl_batch_free(b);
	return ok;
}

/*
 * GK_NFT_PINS, read once at start: unset or empty, pins when the kernel
 * renews timeouts; "off", every transparent cage in set open as on an
 * older kernel (what the tests use to cover that mode on a newer one).
 * 0 with *off, or -1 with err for any other value.
 */
static int
pins_env(bool *off, char *err, size_t errlen)
{
	const char *e = getenv("GK_NFT_PINS");

	*off = e != NULL && strcmp(e, "off") == 0;
	if (e != NULL && *e != '\0' && !*off) {
		gk_seterr(err, errlen, "GK_NFT_PINS=%s: unknown value (the only "
		    "one is \"off\": no pins, as on a kernel before 6.10)", e);
		return -1;
	}
	return 0;
}

/* With a transparent port: pins, or (forced off, or the kernel cannot
 * renew timeouts) set open for every transparent cage; logged either way. */
static void
pins_choose(struct nft_plumb *p, bool off)
{
	if (p->conf.transparent_port == 0)
		return;
	if (!off && (p->pins_ok = pins_probe(p)))
		log_info("nft: transparent cages' TCP to addresses their DNS "
		    "did not give them is refused at the SYN (set %s)",
		    NFT_SET_PINS);
	else
		log_warnx("nft: %s: transparent cages' TCP to addresses their "
		    "DNS did not give them is accepted and then reset, not "
		    "refused at the SYN", off ? "GK_NFT_PINS=off, as on a "
		    "kernel before 6.10" : "this kernel cannot renew a set "
		    "element's timeout (Linux 6.10 and later can)");
}

void
nft_cage_down(struct nft_plumb *p, const char *ifname, struct in_addr cage)
{
	char a[INET_ADDRSTRLEN];

	if (nft_pool_state(p->pool, cage) != NFT_POOL_USED) {
		log_warnx("cage %s: address %s is not in use", ifname,
		    ntop(cage, a));
		return;
	}
	queue_job(p, ifname, cage, true);
}

static int
conf_check(const struct nft_conf *c, char *err, size_t errlen)
{
	if (c->gateway.s_addr == htonl(INADDR_ANY)) {
		gk_seterr(err, errlen, "no gateway address");
		return -1;
	}
	if (c->dns_port == 0 || c->socks_port == 0 || c->http_port == 0) {
		gk_seterr(err, errlen, "the DNS, SOCKS and HTTP ports must not "
		    "be 0");
		return -1;
	}
	return 0;
}

/* Replace any stale table by ours: one transaction. */
static int
table_install(struct nft_plumb *p, char *err, size_t errlen)
{
	struct nft_ruleset rs;
	struct nftnl_batch *b = NULL;
	int exists, rc = -1;

	if ((exists = nft_mnl_table_exists(&p->mnl, err, errlen)) == -1)
		return -1;
	if (exists)
		log_info("nft: replacing a stale table inet %s (left by an "
		    "earlier run)", NFT_TABLE);
	if (nft_ruleset_build(&rs, &p->conf) == -1) {
		gk_seterr(err, errlen, "nftables: building the ruleset: %s",
		    strerror(errno));
		return -1;
	}
	if ((b = nft_batch_new(&p->mnl.seq)) == NULL ||
	    nft_batch_ruleset(b, &rs, &p->mnl.seq) == -1 ||
	    nft_batch_end(b, &p->mnl.seq) == -1)
		gk_seterr(err, errlen, "nftables: building the ruleset batch: "
		    "out of memory");
	else
		rc = nft_mnl_batch(&p->mnl, b, err, errlen);
	if (b != NULL)
		nftnl_batch_free(b);
	nft_ruleset_clear(&rs);
	return rc;
}

static int
table_delete(struct nft_mnl *m, char *err, size_t errlen)
{
	struct nftnl_batch *b;
	int rc;

	if ((b = nft_batch_new(&m->seq)) == NULL ||
	    nft_batch_deltable(b, &m->seq) == -1 ||
	    nft_batch_end(b, &m->seq) == -1) {
		gk_seterr(err, errlen, "nftables: out of memory");
		if (b != NULL)
			nftnl_batch_free(b);
		return -1;
	}
	rc = nft_mnl_batch(m, b, err, errlen);
	nftnl_batch_free(b);
	return rc;
}

static int
sweep(struct nft_plumb *p, const char *when, char *err, size_t errlen)
{
	unsigned n;

	if (nft_link_sweep(p->sk, &n, err, errlen) == -1)
		return -1;
	if (n > 0)
		log_info("nft: removed %u %s gk-* link%s", n, when,
		    n == 1 ? "" : "s");
	return 0;
}

static int
worker_start(struct nft_plumb *p, char *err, size_t errlen)
{
	int rc;

	/* Signals are the loop's business. */
	if ((rc = gk_thread_start(&p->worker, worker_main, p, false)) != 0) {
		gk_seterr(err, errlen, "starting the teardown thread: %s",
		    strerror(rc));
		return -1;
	}
	p->worker_started = true;
	return 0;
}

static void
plumb_release(struct nft_plumb *p)
{
	struct nft_job *j;

	while ((j = TAILQ_FIRST(&p->todo)) != NULL) {
		TAILQ_REMOVE(&p->todo, j, entry);
		free(j);
	}
	while ((j = TAILQ_FIRST(&p->done)) != NULL) {
		TAILQ_REMOVE(&p->done, j, entry);
		free(j);
	}
	if (p->done_ev != NULL)
		event_free(p->done_ev);
	if (p->efd != -1)
		close(p->efd);
	if (p->sk != NULL)
		nl_socket_free(p->sk);
	if (p->wsk != NULL)
		nl_socket_free(p->wsk);
	nft_mnl_close(&p->mnl);
	nft_mnl_close(&p->wmnl);
	nft_pool_free(p->pool);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->mtx);
	free(p);
}

struct nft_plumb *
nft_plumb_new(struct event_base *base, const struct nft_conf *c, char *err,
    size_t errlen)
{
	struct nft_plumb *p;
	char gw[INET_ADDRSTRLEN], net[INET_ADDRSTRLEN];
	bool pins_off;

	if (conf_check(c, err, errlen) == -1 ||
	    pins_env(&pins_off, err, errlen) == -1)
		return NULL;
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		gk_seterr(err, errlen, "out of memory");
		return NULL;
	}
	p->conf = *c;
	p->efd = -1;
	pthread_mutex_init(&p->mtx, NULL);
	pthread_cond_init(&p->cond, NULL);
	TAILQ_INIT(&p->todo);
	TAILQ_INIT(&p->done);
	if ((p->pool = nft_pool_new(c->subnet, c->prefix, c->gateway, err,
	    errlen)) == NULL ||
	    nft_mnl_open(&p->mnl, err, errlen) == -1 ||
	    nft_mnl_open(&p->wmnl, err, errlen) == -1 ||
	    (p->sk = nft_link_sock(err, errlen)) == NULL ||
	    (p->wsk = nft_link_sock(err, errlen)) == NULL)
		goto fail;
	if ((p->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1) {
		gk_seterr(err, errlen, "eventfd: %s", strerror(errno));
		goto fail;
	}
	if ((p->done_ev = event_new(base, p->efd, EV_READ | EV_PERSIST,
	    done_cb, p)) == NULL || event_add(p->done_ev, NULL) == -1) {
		gk_seterr(err, errlen, "adding the teardown event failed");
		goto fail;
	}
	if (table_install(p, err, errlen) == -1)
		goto fail;
	pins_choose(p, pins_off);
	if (sweep(p, "leftover", err, errlen) == -1 ||
	    worker_start(p, err, errlen) == -1)
		goto fail_table;
	log_info("nft: table inet %s ready: cages %s/%u via gateway %s",
	    NFT_TABLE, ntop(c->subnet, net), c->prefix, ntop(c->gateway, gw));
	return p;

fail_table:
	(void)table_delete(&p->mnl, NULL, 0);
fail:
	plumb_release(p);
	return NULL;
}

/* Stop the worker: it finishes the queue, or gives up at the deadline. */
static void
worker_stop(struct nft_plumb *p)
{
	struct nft_job *j;
	size_t left = 0;

	pthread_mutex_lock(&p->mtx);
	p->stopping = true;
	p->deadline = gk_clock_ms() + NFT_STOP_WAIT_S * 1000;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->mtx);
	pthread_join(p->worker, NULL);
	p->worker_started = false;
	TAILQ_FOREACH(j, &p->todo, entry)
		left++;
	TAILQ_FOREACH(j, &p->done, entry)
		left += !j->ok;
	if (left > 0)
		log_warnx("%zu teardowns unfinished after %d s; removing "
		    "every gk-* link and the table instead", left,
		    NFT_STOP_WAIT_S);
}

void
nft_plumb_free(struct nft_plumb *p)
{
	char err[256];

	if (p == NULL)
		return;
	if (p->worker_started)
		worker_stop(p);
	if (sweep(p, "remaining", err, sizeof(err)) == -1)
		log_warnx("%s", err);
	if (table_delete(&p->mnl, err, sizeof(err)) == -1)
		log_warnx("%s", err);
	else
		log_info("nft: table inet %s removed", NFT_TABLE);
	plumb_release(p);
}
