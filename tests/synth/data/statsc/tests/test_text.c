#include "text.h"
int main(void) {
    return !(count_words("a bb  c") == 3 && is_upper_word("ABC") && !is_upper_word("Ab"));
}
