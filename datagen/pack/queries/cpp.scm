; C / C++: `#include "local.h"` and `#include <system.h>`.
(preproc_include path: (string_literal (string_content) @local))
(preproc_include path: (system_lib_string) @system)
