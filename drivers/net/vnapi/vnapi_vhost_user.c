/* placeholder: being written */
#include <rte_common.h>
