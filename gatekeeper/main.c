/* gatekeeperd: replaced by the real daemon entry point shortly. */
#include <stdio.h>
int main(void);
int main(void) { return 1; }
