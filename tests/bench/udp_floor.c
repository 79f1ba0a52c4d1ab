/*
 * udp_floor: the kernel's share of a DNS answer on this machine. A UDP
 * server that answers every query by echoing it with QR set, read with
 * recvmmsg() and written with sendmmsg() in batches of 32, no other work.
 * dns_bench.sh runs it beside gatekeeperd and dnsmasq so the CPU per query
 * of both can be read against the cost no server can avoid.
 *
 *   udp_floor ADDR PORT
 */
#define _GNU_SOURCE
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BATCH	32
#define BUFLEN	4096

int
main(int argc, char **argv)
{
	static uint8_t buf[BATCH][BUFLEN];
	static struct sockaddr_storage peer[BATCH];
	struct mmsghdr in[BATCH], out[BATCH];
	struct iovec iov[BATCH], oiov[BATCH];
	struct sockaddr_in sin;
	struct pollfd pfd;
	int fd, n, i, nout;

	if (argc != 3) {
		fprintf(stderr, "usage: udp_floor ADDR PORT\n");
		return 2;
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)atoi(argv[2]));
	if (inet_pton(AF_INET, argv[1], &sin.sin_addr) != 1) {
		fprintf(stderr, "udp_floor: bad address %s\n", argv[1]);
		return 2;
	}
	if ((fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		perror("udp_floor");
		return 1;
	}
	pfd.fd = fd;
	pfd.events = POLLIN;
	for (;;) {
		if (poll(&pfd, 1, -1) == -1)
			continue;
		for (i = 0; i < BATCH; i++) {
			iov[i].iov_base = buf[i];
			iov[i].iov_len = BUFLEN;
			memset(&in[i].msg_hdr, 0, sizeof(in[i].msg_hdr));
			in[i].msg_hdr.msg_name = &peer[i];
			in[i].msg_hdr.msg_namelen = sizeof(peer[i]);
			in[i].msg_hdr.msg_iov = &iov[i];
			in[i].msg_hdr.msg_iovlen = 1;
		}
		n = recvmmsg(fd, in, BATCH, MSG_DONTWAIT, NULL);
		for (i = 0, nout = 0; i < n; i++) {
			if (in[i].msg_len < 12)
				continue;
			buf[i][2] |= 0x80;	/* QR */
			oiov[nout].iov_base = buf[i];
			oiov[nout].iov_len = in[i].msg_len;
			memset(&out[nout].msg_hdr, 0, sizeof(out[nout].msg_hdr));
			out[nout].msg_hdr.msg_name = &peer[i];
			out[nout].msg_hdr.msg_namelen = in[i].msg_hdr.msg_namelen;
			out[nout].msg_hdr.msg_iov = &oiov[nout];
			out[nout].msg_hdr.msg_iovlen = 1;
			nout++;
		}
		if (nout > 0)
			(void)sendmmsg(fd, out, (unsigned)nout, MSG_DONTWAIT);
	}
}
