/*
 * socks_load.h: what the parts of socks_load share. Linux (epoll), no
 * dependencies:   cc -O2 -o socks_load socks_load.c load_conn.c \
 *                     load_run.c floor.c
 *
 *   socks_load.c   the command line (documented there), the shared state
 *   load_conn.c    one client connection: connect, tunnel set-up, request,
 *                  response check; the bulk file's pattern (mkfile, -V)
 *   load_run.c     the client runs (setup, bulk, idle) and the idle
 *                  tunnels' target (hold)
 *   floor.c        the floor relays (policy-free: copy or splice; SOCKS5,
 *                  HTTP CONNECT or bare forwarding to a fixed target)
 */
#ifndef SOCKS_LOAD_H
#define SOCKS_LOAD_H

#include <netinet/in.h>

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HDR_MAX		8192
#define BULK_BUF	(1024 * 1024)
#define CONN_TIMEOUT_NS	(10ULL * 1000000000ULL)

enum mode { M_DIRECT, M_SOCKS5, M_HTTP };

enum st {
	ST_FREE,
	ST_CONNECT,	/* waiting for the TCP connect */
	ST_GREET,	/* socks5: method reply, 2 bytes */
	ST_SREPLY,	/* socks5: CONNECT reply */
	ST_HREPLY,	/* http: CONNECT reply head */
	ST_RESP,	/* reading the HTTP response to EOF */
	ST_IDLE,	/* idle mode: tunnel up, held */
};

enum err { E_CONNECT, E_PROXY, E_HTTP, E_TIMEOUT, E__MAX };

struct conn {
	int		 fd;
	enum st		 st;
	uint64_t	 t0;		/* ns, socket() */
	uint32_t	 need;		/* socks reply: bytes expected */
	uint32_t	 hlen;		/* bytes in hdr */
	bool		 head_done;
	int		 status;
	long long	 clen;		/* -1: none */
	uint64_t	 body;
	char		 hdr[HDR_MAX];
};

/* The run's settings and tallies (socks_load.c) */
struct socks_load {
	enum mode		 mode;
	struct sockaddr_in	 target, proxy, src;
	bool			 have_src, have_proxy;
	const char		*path;
	int			 epfd;
	bool			 verify;
	uint64_t		 verify_bad;	/* first bad offset + 1 */
	uint64_t		 errs[E__MAX];
	char			 first_err[256];
	uint8_t			*bigbuf;
	char			 req[512];
	size_t			 reqlen;
};

extern struct socks_load	 g;
extern volatile sig_atomic_t	 stop_flag;

uint64_t	now_ns(void);
int		parse_addr(const char *, struct sockaddr_in *, bool);

/* load_conn.c */
int	mkfile(const char *, const char *);
void	note_err(enum err, const char *, const char *);
void	print_errs(void);
int	conn_start(struct conn *);
void	conn_close(struct conn *);
int	conn_event(struct conn *, uint32_t, bool);

/* load_run.c */
int	run_setup(int, double, double);
int	run_bulk(void);
int	run_idle(int, double, int, int);
int	run_hold(const struct sockaddr_in *);

/* floor.c */
enum floor_kind { FLOOR_COPY, FLOOR_SPLICE };
enum floor_proto { FLOOR_SOCKS5, FLOOR_HTTP, FLOOR_BARE };

int	run_floor(const struct sockaddr_in *, enum floor_kind, enum floor_proto,
	    const struct sockaddr_in *);

#endif
