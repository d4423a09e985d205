#include "stats.h"
int main(void) {
    int v[] = {4, 9, 2};
    return !(sum(v, 3) == 15 && max_of(v, 3) == 9 && mean(v, 3) == 5.0);
}
