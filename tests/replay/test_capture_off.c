/* With LM_ENABLE_CAPTURE=OFF the capture API exists but every call says the
 * recorder is not built in; the rest of the API works as usual. This test
 * builds the API's capture and buffer units that way, next to the normal
 * build. */
#include "lightmetal/lightmetal.h"
#include "lm_test.h"

static void test_capture_not_built_in(void) {
    lm_device *dev;
    CHECK_OK(lm_device_open(NULL, &dev));
    lm_binary *bin = NULL;
    CHECK_FAILS(lm_light_metal_begin_capture(dev, NULL), LM_ERR_UNSUPPORTED,
                "lm_light_metal_begin_capture: capture not built in (LM_ENABLE_CAPTURE=OFF)");
    CHECK_FAILS(lm_light_metal_end_capture(dev, &bin), LM_ERR_UNSUPPORTED, "capture not built in");
    CHECK(bin == NULL);
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    c.size = c.page_size = 64;
    lm_buffer b;
    CHECK_OK(lm_create_buffer(dev, &c, &b)); /* no recorder hook in the way */
    CHECK_FAILS(lm_capture_name_buffer(b, "x"), LM_ERR_UNSUPPORTED, "capture not built in");
    uint8_t data[64] = {0};
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    CHECK_FAILS(lm_capture_compare_to_capture(cq, b), LM_ERR_UNSUPPORTED, "not built in");
    CHECK_FAILS(lm_capture_compare_to_golden(cq, b, data, 64), LM_ERR_UNSUPPORTED, "not built in");
    CHECK_OK(lm_enqueue_write_buffer(cq, b, data, true));
    CHECK_OK(lm_deallocate_buffer(b));
    CHECK_OK(lm_device_close(dev));
}

int main(void) {
    TEST_RUN(test_capture_not_built_in);
    return test_summary();
}
