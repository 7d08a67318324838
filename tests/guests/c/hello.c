/* hello: small dynamically linked guest; prints one line, exits 0. */
#include <stdio.h>

int main(void)
{
	fputs("hello from guest\n", stdout);
	return 0;
}
