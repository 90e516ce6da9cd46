/* marker: what attack 7 tries to run without execute permission. */
#include <stdio.h>

int main(void) {
    puts("adversarial-marker-ran");
    return 0;
}
