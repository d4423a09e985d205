int count_words(const char *s);
int is_upper_word(const char *s);
