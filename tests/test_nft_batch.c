/*
 * Tests for nft_rules' batches: the set element key layout, and the
 * message sequence of each batch (the ruleset, element batches touching
 * set cages and set transparent, the table query).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <libmnl/libmnl.h>
#include <libnftnl/batch.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>

#include "nft/nft_int.h"
#include "tests/nft_testutil.h"


static void
test_elem_key(void **state)
{
	static const struct {
		const char	*ifname;
		const char	*addr;
		const char	*hex;
	} cases[] = {
		{ "gk-abcd1234", "10.143.0.2",
		    "676b2d616263643132333400000000000a8f0002" },
		{ "gk-0123456789ab", "10.143.255.254",
		    "676b2d30313233343536373839616200" "0a8ffffe" },
		{ "gk-x", "192.0.2.1",
		    "676b2d78000000000000000000000000c0000201" },
	};
	uint8_t key[NFT_KEYLEN];
	char h[2 * NFT_KEYLEN + 1];
	struct in_addr a;
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(key, 0xee, sizeof(key));
		inet_pton(AF_INET, cases[i].addr, &a);
		nft_elem_key(key, cases[i].ifname, a);
		for (j = 0; j < NFT_KEYLEN; j++)
			snprintf(h + 2 * j, 3, "%02x", key[j]);
		assert_string_equal(h, cases[i].hex);
	}
}

/* Message types of a finished batch, in order; checks flags and seqs. */
static size_t
batch_types(struct nftnl_batch *b, uint16_t *types, size_t max)
{
	struct iovec iov[8];
	const struct nlmsghdr *nlh;
	uint32_t seq = 0;
	size_t n = 0;
	int i, niov, len;

	niov = nftnl_batch_iovec_len(b);
	assert_true(niov >= 1 && niov <= 8);
	nftnl_batch_iovec(b, iov, (uint32_t)niov);
	for (i = 0; i < niov; i++) {
		nlh = iov[i].iov_base;
		len = (int)iov[i].iov_len;
		for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
			assert_true(n < max);
			if (n > 0)
				assert_int_equal(nlh->nlmsg_seq, seq + 1);
			seq = nlh->nlmsg_seq;
			types[n++] = nlh->nlmsg_type;
			if (nlh->nlmsg_type != NFNL_MSG_BATCH_BEGIN &&
			    nlh->nlmsg_type != NFNL_MSG_BATCH_END)
				assert_true(nlh->nlmsg_flags & NLM_F_ACK);
		}
		assert_int_equal(len, 0);
	}
	return n;
}

#define T(x)	((uint16_t)(NFNL_SUBSYS_NFTABLES << 8 | (x)))

/* The ruleset batch: the four sets before the chains, then the rules. */
static void
check_ruleset_batch(uint16_t tport, size_t nrules)
{
	struct nft_conf c = nft_test_conf(53, tport);
	struct nft_ruleset rs;
	struct nftnl_batch *b;
	uint16_t types[64];
	uint32_t seq = 100;
	size_t n, i;

	assert_int_equal(nft_ruleset_build(&rs, &c), 0);
	assert_non_null(b = nft_batch_new(&seq));
	assert_int_equal(nft_batch_ruleset(b, &rs, &seq), 0);
	assert_int_equal(nft_batch_end(b, &seq), 0);
	n = batch_types(b, types, 64);
	/* begin, table (add, delete, add), 4 sets, 5 chains, rules, end */
	assert_int_equal(n, 1 + 3 + 4 + 5 + nrules + 1);
	assert_int_equal(seq, 100 + n);
	assert_int_equal(types[0], NFNL_MSG_BATCH_BEGIN);
	assert_int_equal(types[1], T(NFT_MSG_NEWTABLE));
	assert_int_equal(types[2], T(NFT_MSG_DELTABLE));
	assert_int_equal(types[3], T(NFT_MSG_NEWTABLE));
	for (i = 4; i < 8; i++)
		assert_int_equal(types[i], T(NFT_MSG_NEWSET));
	for (; i < 13; i++)
		assert_int_equal(types[i], T(NFT_MSG_NEWCHAIN));
	for (; i < n - 1; i++)
		assert_int_equal(types[i], T(NFT_MSG_NEWRULE));
	assert_int_equal(types[n - 1], NFNL_MSG_BATCH_END);
	nftnl_batch_free(b);
	nft_ruleset_clear(&rs);
}

static void
test_ruleset_batch(void **state)
{
	struct nftnl_batch *b;
	uint16_t types[64];
	uint32_t seq = 1;

	(void)state;
	check_ruleset_batch(0, 17);
	/* + 2 redirects (pinned, open), + the refusals' log, + the
	 * redirected port's accept */
	check_ruleset_batch(15001, 21);

	assert_non_null(b = nft_batch_new(&seq));
	assert_int_equal(nft_batch_deltable(b, &seq), 0);
	assert_int_equal(nft_batch_end(b, &seq), 0);
	assert_int_equal(batch_types(b, types, 64), 3);
	assert_int_equal(types[1], T(NFT_MSG_DELTABLE));
	nftnl_batch_free(b);
}

/*
 * The key of one NFTA_LIST_ELEM nest. (libnftnl numbers the elements of a
 * list 1, 2, 3... and its own parser then refuses all but the first; the
 * kernel ignores the numbers. So parse with libmnl.)
 */
static const void *
elem_key(const struct nlattr *elem, uint16_t *len)
{
	const struct nlattr *a, *d;

	mnl_attr_for_each_nested(a, elem) {
		if (mnl_attr_get_type(a) != NFTA_SET_ELEM_KEY)
			continue;
		mnl_attr_for_each_nested(d, a) {
			if (mnl_attr_get_type(d) != NFTA_DATA_VALUE)
				continue;
			*len = mnl_attr_get_payload_len(d);
			return mnl_attr_get_payload(d);
		}
	}
	return NULL;
}

/*
 * Check one element message: its set name is returned in *set, its keys
 * must be want[first...] in order. Returns how many elements it carried.
 */
static size_t
check_elem_msg(const struct nlmsghdr *nlh, const char **set,
    const struct nft_elem *const *want, size_t first, size_t n)
{
	const struct nlattr *a, *e;
	uint8_t wkey[NFT_KEYLEN];
	const void *key;
	uint16_t klen;
	size_t got = 0;
	int seen = 0;

	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
		switch (mnl_attr_get_type(a)) {
		case NFTA_SET_ELEM_LIST_TABLE:
			assert_string_equal(mnl_attr_get_str(a), NFT_TABLE);
			seen |= 1;
			break;
		case NFTA_SET_ELEM_LIST_SET:
			*set = mnl_attr_get_str(a);
			seen |= 2;
			break;
		case NFTA_SET_ELEM_LIST_ELEMENTS:
			mnl_attr_for_each_nested(e, a) {
				assert_true(first + got < n);
				assert_non_null(key = elem_key(e, &klen));
				assert_int_equal(klen, NFT_KEYLEN);
				nft_elem_key(wkey, want[first + got]->ifname,
				    want[first + got]->addr);
				assert_memory_equal(key, wkey, NFT_KEYLEN);
				got++;
			}
			break;
		default:
			break;
		}
	}
	assert_int_equal(seen, 3);
	return got;
}

/*
 * The batch holds, in order: messages for set cages with want_c[0..nc),
 * then messages for set transparent with want_t[0..nt); at most 64
 * elements in one message, all of type `type`.
 */
static void
check_elems(struct nftnl_batch *b, const struct nft_elem *const *want_c,
    size_t nc, const struct nft_elem *const *want_t, size_t nt,
    uint16_t type)
{
	struct iovec iov[8];
	const struct nlmsghdr *nlh;
	const char *set = NULL;
	size_t gotc = 0, gott = 0, k, msgc = 0, msgt = 0;
	int len, niov;

	niov = nftnl_batch_iovec_len(b);
	assert_int_equal(niov, 1);
	nftnl_batch_iovec(b, iov, (uint32_t)niov);
	nlh = iov[0].iov_base;
	len = (int)iov[0].iov_len;
	for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
		if (nlh->nlmsg_type == NFNL_MSG_BATCH_BEGIN ||
		    nlh->nlmsg_type == NFNL_MSG_BATCH_END)
			continue;
		assert_int_equal(nlh->nlmsg_type, T(type));
		assert_int_equal(nlh->nlmsg_flags & NLM_F_EXCL,
		    type == NFT_MSG_NEWSETELEM ? NLM_F_EXCL : 0);
		/* Peek at the set name first: cages, then transparent. */
		if (msgt == 0 && gotc < nc) {
			k = check_elem_msg(nlh, &set, want_c, gotc, nc);
			assert_string_equal(set, "cages");
			gotc += k;
			msgc++;
		} else {
			k = check_elem_msg(nlh, &set, want_t, gott, nt);
			assert_string_equal(set, "transparent");
			gott += k;
			msgt++;
		}
		assert_true(k >= 1 && k <= 64);
	}
	assert_int_equal(gotc, nc);
	assert_int_equal(gott, nt);
	assert_int_equal(msgc, (nc + 63) / 64);
	assert_int_equal(msgt, (nt + 63) / 64);
}

/* Cages gk-00000000...; every `tp_every`-th one transparent (0: none). */
static void
make_elems(struct nft_elem *el, size_t n, size_t tp_every)
{
	size_t i;

	for (i = 0; i < n; i++) {
		memset(&el[i], 0, sizeof(el[i]));
		snprintf(el[i].ifname, sizeof(el[i].ifname), "gk-%08zx", i);
		el[i].addr.s_addr = htonl(0x0a8f0002 + (uint32_t)i);
		el[i].transparent = tp_every != 0 && i % tp_every == 0;
	}
}

static void
test_elem_batches(void **state)
{
	static const size_t sizes[] = { 1, 2, 63, 64, 65, 129, 200 };
	/* 0: none transparent, 1: all, 2 and 3: some */
	static const size_t tp_every[] = { 0, 1, 2, 3 };
	const struct nft_elem *wc[200], *wt[200];
	struct nft_elem el[200];
	struct nftnl_batch *b;
	uint32_t seq = 1;
	size_t i, k, t, nt;
	bool add;

	(void)state;
	for (t = 0; t < sizeof(tp_every) / sizeof(tp_every[0]); t++) {
		make_elems(el, 200, tp_every[t]);
		for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			add = (k + t) % 2 == 0;
			for (i = nt = 0; i < sizes[k]; i++) {
				wc[i] = &el[i];
				if (el[i].transparent)
					wt[nt++] = &el[i];
			}
			assert_non_null(b = nft_batch_new(&seq));
			assert_int_equal(nft_batch_elems(b, add, el, sizes[k],
			    &seq), 0);
			assert_int_equal(nft_batch_end(b, &seq), 0);
			check_elems(b, wc, sizes[k], wt, nt, add ?
			    NFT_MSG_NEWSETELEM : NFT_MSG_DELSETELEM);
			nftnl_batch_free(b);
		}
	}
}

/* One cage up: a single transaction adds to both sets (or cages only). */
static void
test_elem_one_cage(void **state)
{
	const struct nft_elem *w[1];
	struct nft_elem el;
	struct nftnl_batch *b;
	uint32_t seq = 7;

	(void)state;
	make_elems(&el, 1, 1);
	w[0] = &el;
	assert_non_null(b = nft_batch_new(&seq));
	assert_int_equal(nft_batch_elems(b, true, &el, 1, &seq), 0);
	assert_int_equal(nft_batch_end(b, &seq), 0);
	assert_int_equal(seq, 7 + 4);	/* begin, cages, transparent, end */
	check_elems(b, w, 1, w, 1, NFT_MSG_NEWSETELEM);
	nftnl_batch_free(b);

	el.transparent = false;
	assert_non_null(b = nft_batch_new(&seq));
	assert_int_equal(nft_batch_elems(b, false, &el, 1, &seq), 0);
	assert_int_equal(nft_batch_end(b, &seq), 0);
	check_elems(b, w, 1, NULL, 0, NFT_MSG_DELSETELEM);
	nftnl_batch_free(b);
}

/* One set only: every element, whatever its .transparent says. */
static void
test_set_elems(void **state)
{
	const struct nft_elem *w[70];
	struct nft_elem el[70];
	struct nftnl_batch *b;
	uint32_t seq = 1;
	size_t i;

	(void)state;
	make_elems(el, 70, 2);
	for (i = 0; i < 70; i++)
		w[i] = &el[i];
	assert_non_null(b = nft_batch_new(&seq));
	assert_int_equal(nft_batch_set_elems(b, NFT_SET, false, el, 70,
	    &seq), 0);
	assert_int_equal(nft_batch_end(b, &seq), 0);
	check_elems(b, w, 70, NULL, 0, NFT_MSG_DELSETELEM);
	nftnl_batch_free(b);

	assert_non_null(b = nft_batch_new(&seq));
	assert_int_equal(nft_batch_set_elems(b, NFT_SET_TP, false, el, 70,
	    &seq), 0);
	assert_int_equal(nft_batch_end(b, &seq), 0);
	check_elems(b, NULL, 0, w, 70, NFT_MSG_DELSETELEM);
	nftnl_batch_free(b);
}

/* The set names of a batch's element messages, in order, and their
 * flags and element counts. */
struct elem_msg {
	char		 set[32];
	uint16_t	 type, flags;
	size_t		 n;
};

static size_t
elem_msgs(struct nftnl_batch *b, struct elem_msg *m, size_t max)
{
	struct iovec iov[8];
	const struct nlmsghdr *nlh;
	const struct nlattr *a, *e;
	size_t k = 0;
	int len;

	assert_int_equal(nftnl_batch_iovec_len(b), 1);
	nftnl_batch_iovec(b, iov, 1);
	nlh = iov[0].iov_base;
	len = (int)iov[0].iov_len;
	for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
		if (nlh->nlmsg_type == NFNL_MSG_BATCH_BEGIN ||
		    nlh->nlmsg_type == NFNL_MSG_BATCH_END)
			continue;
		assert_true(k < max);
		memset(&m[k], 0, sizeof(m[k]));
		m[k].type = nlh->nlmsg_type;
		m[k].flags = nlh->nlmsg_flags;
		mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
			if (mnl_attr_get_type(a) == NFTA_SET_ELEM_LIST_SET)
				snprintf(m[k].set, sizeof(m[k].set), "%s",
				    mnl_attr_get_str(a));
			if (mnl_attr_get_type(a) ==
			    NFTA_SET_ELEM_LIST_ELEMENTS)
				mnl_attr_for_each_nested(e, a)
					m[k].n++;
		}
		k++;
	}
	return k;
}

/* A cage in set open too: a third set in the same transaction. */
static void
test_elem_open(void **state)
{
	struct elem_msg m[8];
	struct nft_elem el;
	struct nftnl_batch *b;
	uint32_t seq = 1;

	(void)state;
	make_elems(&el, 1, 1);
	el.open = true;
	assert_non_null(b = nft_batch_new(&seq));
	assert_int_equal(nft_batch_elems(b, false, &el, 1, &seq), 0);
	assert_int_equal(nft_batch_end(b, &seq), 0);
	assert_int_equal(elem_msgs(b, m, 8), 3);
	assert_string_equal(m[0].set, "cages");
	assert_string_equal(m[1].set, "transparent");
	assert_string_equal(m[2].set, "open");
	assert_int_equal(m[2].type, T(NFT_MSG_DELSETELEM));
	nftnl_batch_free(b);
}

/* The pins: key ifindex (host order) . address; adds carry a timeout and
 * no NLM_F_EXCL (adding one again renews it); 64 to a message. */
static void
test_pins_batch(void **state)
{
	struct nft_pin p[70];
	struct elem_msg m[8];
	struct nftnl_batch *b;
	uint8_t key[NFT_PIN_KEYLEN];
	uint32_t seq = 1, idx = 0x01020304;
	size_t i;

	(void)state;
	nft_pin_key(key, idx, (struct in_addr){ htonl(0xc0000201) });
	assert_memory_equal(key, &idx, 4);
	assert_memory_equal(key + 4, "\xc0\x00\x02\x01", 4);
	for (i = 0; i < 70; i++) {
		p[i].ifindex = 7;
		p[i].addr.s_addr = htonl(0xc0000200 + (uint32_t)i);
		p[i].timeout_ms = 90000;
	}
	assert_non_null(b = nft_batch_new(&seq));
	assert_int_equal(nft_batch_pins(b, true, p, 70, &seq), 0);
	assert_int_equal(nft_batch_end(b, &seq), 0);
	assert_int_equal(elem_msgs(b, m, 8), 2);
	for (i = 0; i < 2; i++) {
		assert_string_equal(m[i].set, "pins");
		assert_int_equal(m[i].type, T(NFT_MSG_NEWSETELEM));
		assert_int_equal(m[i].flags & NLM_F_EXCL, 0);
		assert_true(m[i].flags & NLM_F_CREATE);
	}
	assert_int_equal(m[0].n, 64);
	assert_int_equal(m[1].n, 6);
	nftnl_batch_free(b);
	assert_non_null(b = nft_batch_new(&seq));
	assert_int_equal(nft_batch_pins(b, false, p, 1, &seq), 0);
	assert_int_equal(nft_batch_end(b, &seq), 0);
	assert_int_equal(elem_msgs(b, m, 8), 1);
	assert_int_equal(m[0].type, T(NFT_MSG_DELSETELEM));
	nftnl_batch_free(b);
}

static void
test_gettable(void **state)
{
	char buf[512];
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;

	(void)state;
	nft_msg_gettable(buf, 42);
	assert_int_equal(nlh->nlmsg_type, T(NFT_MSG_GETTABLE));
	assert_int_equal(nlh->nlmsg_seq, 42);
	assert_true(nlh->nlmsg_flags & NLM_F_REQUEST);
	assert_true(nlh->nlmsg_flags & NLM_F_ACK);
	assert_true(nlh->nlmsg_len < sizeof(buf));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elem_key),
		cmocka_unit_test(test_ruleset_batch),
		cmocka_unit_test(test_elem_batches),
		cmocka_unit_test(test_elem_one_cage),
		cmocka_unit_test(test_set_elems),
		cmocka_unit_test(test_elem_open),
		cmocka_unit_test(test_pins_batch),
		cmocka_unit_test(test_gettable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
