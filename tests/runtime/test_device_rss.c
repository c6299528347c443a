/* Opening and closing a default device (12 GiB of DRAM, 64 cores of L1) must
 * commit almost no host memory: device memory is backed lazily. */
#include <sys/resource.h>

#include "lightmetal/lightmetal.h"
#include "lm_test.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

static void test_peak_rss_of_open_close(void) {
    lm_device *dev;
    CHECK_OK(lm_device_open(NULL, &dev));
    /* Touch a little of each memory so the check is about laziness, not idleness. */
    lm_buffer buf;
    lm_buffer_config cfg;
    lm_buffer_config_init(&cfg);
    cfg.size = 1 << 20;
    cfg.page_size = 2048;
    CHECK_OK(lm_create_buffer(dev, &cfg, &buf));
    static uint8_t data[1 << 20];
    CHECK_OK(lm_enqueue_write_buffer(lm_device_command_queue(dev, 0), buf, data, true));
    CHECK_OK(lm_device_close(dev));
    struct rusage ru;
    CHECK(getrusage(RUSAGE_SELF, &ru) == 0);
    long peak_kib = ru.ru_maxrss;
    printf("  peak RSS after open+write+close: %ld KiB\n", peak_kib);
#ifndef UNDER_ASAN /* the sanitizer's shadow memory would dominate the figure */
    CHECK(peak_kib <= 64 * 1024);
#endif
}

int main(void) {
    TEST_RUN(test_peak_rss_of_open_close);
    return test_summary();
}
