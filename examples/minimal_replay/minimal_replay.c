/* minimal_replay: the embedded use of Light Metal. Runs a captured binary on
 * a device matching it, checks its goldens and reports. Links only the replay
 * library: no kernel compiler, no recorder.
 *
 * Usage: minimal_replay FILE
 * Exit codes as `lightmetal run`: 0 pass, 1 golden mismatch, 2 usage, invalid
 * file or no matching device, 3 device fault. */
#include <stdio.h>

#include "lightmetal/lm_replay.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE\n", argv[0]);
        return 2;
    }
    lm_replay *replay;
    lm_status st = lm_replay_open_file(argv[1], &replay);
    if (st != LM_OK) {
        fprintf(stderr, "%s\n", lm_last_error());
        return 2;
    }
    lm_replay_report report = {0};
    st = lm_replay_run(replay, NULL, NULL, &report);
    /* Like every output, the report is written only when the workload ran:
     * on success, or on a golden mismatch (which it describes). */
    if (st == LM_OK || st == LM_ERR_MISMATCH)
        printf("%llu commands, %llu programs, %u goldens checked in %.3f s: %s\n",
               (unsigned long long)report.commands, (unsigned long long)report.programs,
               report.goldens_checked, report.seconds, st == LM_OK ? "PASS" : lm_last_error());
    else
        fprintf(stderr, "%s\n", lm_last_error());
    lm_replay_close(replay);
    return st == LM_OK ? 0 : st == LM_ERR_MISMATCH ? 1 : st == LM_ERR_DEVICE_FAULT ? 3 : 2;
}
