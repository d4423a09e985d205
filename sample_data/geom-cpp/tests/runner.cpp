// Runs one registered case by name (`geom_tests vec.add_sub`) or lists them (`geom_tests --list`).
#include <cstring>
#include <iostream>
#include <map>
#include <string>

#include "check.hpp"

namespace check {

static std::map<std::string, Case>& registry() {
    static std::map<std::string, Case> cases;
    return cases;
}

bool add(const char* name, Case fn) {
    registry()[name] = fn;
    return true;
}

}  // namespace check

int main(int argc, char** argv) {
    auto& cases = check::registry();
    if (argc != 2 || std::strcmp(argv[1], "--list") == 0) {
        for (const auto& entry : cases) {
            std::cout << entry.first << "\n";
        }
        return argc == 2 ? 0 : 2;
    }
    auto it = cases.find(argv[1]);
    if (it == cases.end()) {
        std::cerr << "no such case: " << argv[1] << "\n";
        return 2;
    }
    try {
        it->second();
    } catch (const check::Failure& f) {
        std::cerr << "FAIL " << argv[1] << ": " << f.what() << "\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "ERROR " << argv[1] << ": unexpected exception: " << e.what() << "\n";
        return 1;
    }
    std::cout << "ok " << argv[1] << "\n";
    return 0;
}
