#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>
#include <chrono>
int main(int argc, char** argv) {
    std::string m = argv[1];
    if (m == "pass") { std::cout << "ok\n"; return 0; }
    if (m == "fail") { std::cerr << "expected 5, got 4\n"; return 1; }
    if (m == "crash") { std::abort(); }
    if (m == "skip") { return 77; }
    if (m == "sleep") { std::this_thread::sleep_for(std::chrono::seconds(5)); }
    return 0;
}
