/*
 * syscall_jail: run a program under a seccomp filter that allows only the
 * system calls named in a file, as systemd's SystemCallFilter= does with
 * SystemCallErrorNumber=EPERM: anything else fails with EPERM.
 *
 *   syscall_jail LIST -- PROGRAM [ARG...]
 *
 * LIST holds one system call name per line (`systemd-analyze
 * syscall-filter @system-service`, groups expanded); names this
 * architecture does not know are skipped. The program is exec'd (same
 * pid), so a test can run gatekeeperd through it as it would run it
 * under the unit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <seccomp.h>

int
main(int argc, char **argv)
{
	char line[128];
	scmp_filter_ctx ctx;
	size_t n, allowed = 0;
	FILE *f;
	int nr;

	if (argc < 4 || strcmp(argv[2], "--") != 0) {
		fprintf(stderr, "usage: syscall_jail LIST -- PROGRAM [ARG...]\n");
		return 2;
	}
	if ((f = fopen(argv[1], "r")) == NULL) {
		fprintf(stderr, "syscall_jail: %s: %s\n", argv[1],
		    strerror(errno));
		return 2;
	}
	if ((ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM))) == NULL) {
		fprintf(stderr, "syscall_jail: seccomp_init failed\n");
		return 2;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		n = strcspn(line, " \t\r\n");
		line[n] = '\0';
		if (n == 0 || line[0] == '#' || line[0] == '@')
			continue;
		if ((nr = seccomp_syscall_resolve_name(line)) == __NR_SCMP_ERROR)
			continue;
		if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0) == 0)
			allowed++;
	}
	fclose(f);
	/* execve itself must pass, and is in every list that runs anything */
	if (allowed == 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    seccomp_load(ctx) != 0) {
		fprintf(stderr, "syscall_jail: cannot load the filter (%zu "
		    "calls allowed)\n", allowed);
		return 2;
	}
	seccomp_release(ctx);
	execv(argv[3], argv + 3);
	fprintf(stderr, "syscall_jail: %s: %s\n", argv[3], strerror(errno));
	return 127;
}
