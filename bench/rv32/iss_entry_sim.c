/* Entry of the workload on the simulated core: the host puts the round count
 * in a0, the result comes back in a0 when _start returns. */
#include <stdint.h>

uint32_t iss_workload(uint32_t rounds);
uint32_t _start(uint32_t rounds);

uint32_t _start(uint32_t rounds) {
    return iss_workload(rounds);
}
