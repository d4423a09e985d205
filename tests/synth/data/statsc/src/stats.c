#include "stats.h"

/* The sum of the first n values. */
int sum(const int *v, int n) {
    int s = 0;
    for (int i = 0; i < n; i++) {
        s += v[i];
    }
    return s;
}

/* The largest of the first n values (n > 0). */
int max_of(const int *v, int n) {
    int m = v[0];
    for (int i = 1; i < n; i++) {
        if (v[i] > m) {
            m = v[i];
        }
    }
    return m;
}

/* The mean, 0 for no values. */
double mean(const int *v, int n) {
    if (n == 0) {
        return 0.0;
    }
    return (double)sum(v, n) / n;
}
