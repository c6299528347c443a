/* Replays the binary workload.c captured, linked against the replay-only
 * library, and checks the named output.
 *
 * Usage: replayer FILE.lmb      prints PASS, or what failed */
#include <stdio.h>

#include <lightmetal/lm_replay.h>
#include <lightmetal/lm_version.h>

#include "workload.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: replayer FILE.lmb\n");
        return 2;
    }
    static uint32_t output[WL_WORDS];
    lm_replay *replay;
    lm_replay_report report;
    lm_status st = lm_replay_open_file(argv[1], &replay);
    if (st == LM_OK) {
        st = lm_replay_run(replay, NULL, NULL, &report);
        if (st == LM_OK) st = lm_replay_get_output(replay, "output", output, sizeof output);
        lm_replay_close(replay);
    }
    if (st != LM_OK) {
        fprintf(stderr, "replayer: %s: %s\n", lm_status_string(st), lm_last_error());
        printf("FAIL\n");
        return 1;
    }
    int bad = 0;
    for (uint32_t i = 0; i < WL_WORDS && !bad; i++)
        if (output[i] != wl_output(i)) {
            fprintf(stderr, "replayer: word %u is 0x%08x, want 0x%08x\n", i, output[i],
                    wl_output(i));
            bad = 1;
        }
    printf("lightmetal %s: %u golden(s) checked\n%s\n", lm_version_string(), report.goldens_checked,
           bad ? "FAIL" : "PASS");
    return bad;
}
