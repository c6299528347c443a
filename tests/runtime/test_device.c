/* Public device API: options, info, queues, bad arguments. */
#include "lightmetal/lightmetal.h"
#include "lm_test.h"

static void test_defaults(void) {
    lm_device_options o;
    lm_device_options_init(&o);
    CHECK(o.grid_x == 8 && o.grid_y == 8);
    CHECK_EQ_U64(o.l1_size, 1499136);
    CHECK(o.dram_banks == 12 && o.dram_bank_size == 1ull << 30);
    CHECK(o.num_command_queues == 2);
    lm_device_options_init(NULL); /* accepted, does nothing */
}

static void test_open_default_and_info(void) {
    lm_device *dev = NULL;
    CHECK_OK(lm_device_open(NULL, &dev));
    lm_device_info info;
    CHECK_OK(lm_device_get_info(dev, &info));
    CHECK(info.grid_x == 8 && info.grid_y == 8 && info.dram_banks == 12);
    CHECK_EQ_U64(info.l1_size, 1499136);
    CHECK(info.l1_unreserved_base > 0 && info.l1_unreserved_base < info.l1_size);
    CHECK_EQ_U64(info.trace_region_base + info.trace_region_size, info.dram_bank_size);
    CHECK(info.num_threads >= 1);
    CHECK(lm_device_command_queue(dev, 0) != NULL);
    CHECK(lm_device_command_queue(dev, 1) != NULL);
    CHECK(lm_device_command_queue(dev, 0) != lm_device_command_queue(dev, 1));
    CHECK(lm_device_command_queue(dev, 2) == NULL);
    CHECK_ERROR_HAS("cq_id 2 is out of range (device has 2 queues)");
    CHECK_OK(lm_device_close(dev));
}

static void test_custom_geometry(void) {
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 3;
    o.grid_y = 2;
    o.l1_size = 256 * 1024;
    o.dram_banks = 5;
    o.dram_bank_size = 64 << 20;
    o.trace_region_size = 0;
    o.num_command_queues = 1;
    o.num_threads = 3;
    lm_device *dev;
    CHECK_OK(lm_device_open(&o, &dev));
    lm_device_info info;
    CHECK_OK(lm_device_get_info(dev, &info));
    CHECK(info.grid_x == 3 && info.grid_y == 2 && info.dram_banks == 5 && info.num_threads == 3);
    CHECK_EQ_U64(info.trace_region_base, 64 << 20);
    CHECK(lm_device_command_queue(dev, 1) == NULL);
    CHECK_ERROR_HAS("device has 1 queue)");
    CHECK_OK(lm_device_close(dev));
}

/* Each bad option is refused with a message naming the field. */
static void test_bad_options(void) {
    lm_device_options o;
    lm_device *dev = (lm_device *)0x1;
#define BAD(field_text, stmt)                                                                      \
    do {                                                                                           \
        lm_device_options_init(&o);                                                                \
        stmt;                                                                                      \
        CHECK_FAILS(lm_device_open(&o, &dev), LM_ERR_INVALID_ARGUMENT, field_text);                \
        CHECK(dev == (lm_device *)0x1);                                                            \
    } while (0)
    BAD("options.grid_x = 0", o.grid_x = 0);
    BAD("options.grid_x = 33", o.grid_x = 33);
    BAD("options.grid_y = 0", o.grid_y = 0);
    BAD("options.l1_size = 1000", o.l1_size = 1000);
    BAD("options.l1_size = 1499137", o.l1_size = 1499137);
    BAD("options.l1_size", o.l1_size = 1ull << 40);
    BAD("options.dram_banks = 0", o.dram_banks = 0);
    BAD("options.dram_banks = 65", o.dram_banks = 65);
    BAD("options.dram_bank_size = 4096", o.dram_bank_size = 4096);
    BAD("options.dram_bank_size", o.dram_bank_size = (1ull << 30) + 1);
    BAD("options.trace_region_size = 33", o.trace_region_size = 33);
    BAD("at most half of dram_bank_size", o.trace_region_size = 1ull << 30);
    BAD("options.num_command_queues = 0", o.num_command_queues = 0);
    BAD("options.num_command_queues = 3", o.num_command_queues = 3);
    BAD("options.num_threads = 5000", o.num_threads = 5000);
#undef BAD
    CHECK_FAILS(lm_device_open(NULL, NULL), LM_ERR_INVALID_ARGUMENT, "out_device is NULL");
}

static void test_null_device(void) {
    lm_device_info info;
    CHECK_FAILS(lm_device_get_info(NULL, &info), LM_ERR_INVALID_HANDLE, "device is NULL");
    CHECK(lm_device_command_queue(NULL, 0) == NULL);
    CHECK_ERROR_HAS("device is NULL");
    CHECK_OK(lm_device_close(NULL));
    lm_device *dev;
    CHECK_OK(lm_device_open(NULL, &dev));
    CHECK_FAILS(lm_device_get_info(dev, NULL), LM_ERR_INVALID_ARGUMENT, "out_info is NULL");
    CHECK_OK(lm_device_close(dev));
}

/* Several devices at once are independent. */
static void test_two_devices(void) {
    lm_device *a, *b;
    CHECK_OK(lm_device_open(NULL, &a));
    CHECK_OK(lm_device_open(NULL, &b));
    CHECK(a != b);
    CHECK_OK(lm_device_close(a));
    CHECK_OK(lm_device_close(b));
}

int main(void) {
    TEST_RUN(test_defaults);
    TEST_RUN(test_open_default_and_info);
    TEST_RUN(test_custom_geometry);
    TEST_RUN(test_bad_options);
    TEST_RUN(test_null_device);
    TEST_RUN(test_two_devices);
    return test_summary();
}
