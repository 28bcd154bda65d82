#include <zephyr/sys/printk.h>
#include <etch.h>

int main(void)
{
	printk("%u kernels\n", (unsigned int)etch_kernel_count());
	return 0;
}
