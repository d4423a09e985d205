int sum(const int *v, int n);
int max_of(const int *v, int n);
double mean(const int *v, int n);
