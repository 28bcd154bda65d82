/*
 * etch live keyword spotting: a microphone through Zephyr's DMIC API, the
 * streaming MFCC front-end every 20 ms, the trained MLPerf Tiny DS-CNN every
 * CONFIG_KWS_INFERENCE_INTERVAL_MS on the last second of audio, and the
 * detections (posterior averaging, threshold, refractory period: etch_kws_*)
 * as log lines and an LED. On native_sim the microphone is the etch module's
 * virtual DMIC, which plays a WAV file (--dmic-wav=FILE) in real time through
 * the same DMIC calls.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <string.h>

#include <zephyr/audio/dmic.h>
#include <zephyr/device.h>
#include <zephyr/drivers/gpio.h>
#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>
#include <zephyr/sys/util.h>

#include <etch.h>
#include <etch_model.h> /* CONFIG_ETCH_MODEL, embedded by the module */
#include <etch_zephyr.h>

LOG_MODULE_REGISTER(kws, LOG_LEVEL_INF);

/* MLPerf Tiny's classes in the model's output order (models/kws/labels.txt);
 * the first ten are keywords.
 */
static const char *const labels[] = {
	"down", "go", "left", "no", "off", "on", "right", "stop", "up", "yes",
	"silence", "unknown",
};
#define NUM_LABELS   ARRAY_SIZE(labels)
#define NUM_KEYWORDS 10

#define RATE         ETCH_FRONTEND_SAMPLE_RATE
#define HOP          ETCH_FRONTEND_HOP_SAMPLES /* 20 ms */
#define HOP_MS       (HOP * 1000 / RATE)
#define BLOCK_BYTES  (HOP * sizeof(int16_t))
#define EVERY_HOPS   (CONFIG_KWS_INFERENCE_INTERVAL_MS / HOP_MS)
#define SECOND_HOPS  (ETCH_FRONTEND_CLIP_SAMPLES / HOP) /* 50 */

BUILD_ASSERT(CONFIG_KWS_INFERENCE_INTERVAL_MS % HOP_MS == 0,
	     "CONFIG_KWS_INFERENCE_INTERVAL_MS must be a multiple of 20 ms");

K_MEM_SLAB_DEFINE_STATIC(audio_slab, BLOCK_BYTES, CONFIG_KWS_AUDIO_BLOCKS, 4);

static uint8_t arena[CONFIG_KWS_ARENA_BYTES] __aligned(ETCH_PLANNED_BUFFER_ALIGNMENT);
static etch_program_t program;
static etch_method_t method;
static etch_frontend_t frontend;      /* 2 KiB FFT scratch */
static etch_frontend_stream_t stream; /* the last second's mel energies */
static etch_kws_t recognizer;
static int8_t features[ETCH_FRONTEND_FEATURES];
#if defined(CONFIG_THREAD_STACK_INFO)
/* Stack painting around etch_method_execute() (<etch_zephyr.h>), and the
 * deepest inference (0: not measured).
 */
static struct etch_zephyr_stack_probe stack_probe;
static size_t inference_stack;
#endif

#if defined(CONFIG_ARCH_POSIX)
#include "posix_board_if.h"
#endif
#if defined(CONFIG_ETCH_VIRTUAL_DMIC)
/* The virtual microphone's count of blocks it had to drop. */
uint32_t etch_virtual_dmic_overruns(const struct device *dev);
#define OVERRUNS(mic) etch_virtual_dmic_overruns(mic)
#else
#define OVERRUNS(mic) 0u
#endif

#if DT_NODE_EXISTS(DT_ALIAS(led0))
static const struct gpio_dt_spec led = GPIO_DT_SPEC_GET(DT_ALIAS(led0), gpios);
#endif

static float in_scale;
static int32_t in_zp;
static int32_t out_zp;

static int fail(const char *what, etch_status_t st)
{
	LOG_ERR("%s failed: 0x%02x %s", what, (unsigned int)st, etch_status_str(st));
	return -1;
}

static int setup_model(void)
{
	etch_tensor_info_t info;
	etch_status_t st;
	double d;
	int64_t zp;
	size_t used;

	st = etch_zephyr_load_model(&program);
	if (st != ETCH_OK) {
		return fail("etch_program_load", st);
	}
	st = etch_method_input_info(&program, "forward", 0, &info);
	if (st != ETCH_OK || info.dtype != ETCH_DTYPE_CHAR ||
	    info.nbytes != ETCH_FRONTEND_FEATURES) {
		LOG_ERR("the model does not take the front-end's %u int8 features",
			ETCH_FRONTEND_FEATURES);
		return -1;
	}
	st = etch_zephyr_method_load(&program, "forward", &method, arena, sizeof(arena), &used);
	if (st != ETCH_OK) {
		LOG_ERR("the model needs %u bytes of arena: set CONFIG_KWS_ARENA_BYTES",
			(unsigned int)used);
		return fail("etch_method_load", st);
	}
	st = etch_zephyr_config_value(&program, "input0_scale", &d, NULL);
	in_scale = (float)d;
	if (st == ETCH_OK) {
		st = etch_zephyr_config_value(&program, "input0_zp", NULL, &zp);
		in_zp = (int32_t)zp;
	}
	if (st == ETCH_OK) {
		st = etch_zephyr_config_value(&program, "output0_zp", NULL, &zp);
		out_zp = (int32_t)zp;
	}
	if (st != ETCH_OK) {
		return fail("quantization parameters", st);
	}
	LOG_INF("model %u bytes, arena %u bytes, inference every %u ms", (unsigned int)etch_model_size,
		(unsigned int)used, CONFIG_KWS_INFERENCE_INTERVAL_MS);
	return 0;
}

static int setup_recognizer(void)
{
	const etch_kws_config_t cfg = {
		.labels = NUM_LABELS,
		.keywords = NUM_KEYWORDS,
		.window_ms = CONFIG_KWS_AVERAGE_WINDOW_MS,
		.min_count = CONFIG_KWS_MIN_COUNT,
		.threshold = CONFIG_KWS_THRESHOLD,
		.refractory_ms = CONFIG_KWS_REFRACTORY_MS,
	};
	etch_status_t st = etch_kws_init(&recognizer, &cfg);

	if (st == ETCH_OK) {
		st = etch_frontend_stream_init(&stream);
	}
	return st == ETCH_OK ? 0 : fail("recognizer set-up", st);
}

static int start_microphone(const struct device *mic)
{
	struct pcm_stream_cfg pcm = {
		.pcm_rate = RATE,
		.pcm_width = 16,
		.block_size = BLOCK_BYTES,
		.mem_slab = &audio_slab,
	};
	struct dmic_cfg cfg = {
		.io = {
			.min_pdm_clk_freq = 1000000,
			.max_pdm_clk_freq = 3500000,
			.min_pdm_clk_dc = 40,
			.max_pdm_clk_dc = 60,
		},
		.streams = &pcm,
		.channel = {
			.req_num_streams = 1,
			.req_num_chan = 1,
		},
	};
	int ret;

	cfg.channel.req_chan_map_lo = dmic_build_channel_map(0, 0, PDM_CHAN_LEFT);
	if (!device_is_ready(mic)) {
		LOG_ERR("microphone %s is not ready", mic->name);
		return -ENODEV;
	}
	ret = dmic_configure(mic, &cfg);
	if (ret < 0) {
		LOG_ERR("microphone configuration failed: %d", ret);
		return ret;
	}
	ret = dmic_trigger(mic, DMIC_TRIGGER_START);
	if (ret < 0) {
		LOG_ERR("microphone start failed: %d", ret);
	}
	return ret;
}

/* One inference on the last second: 0 or a negative error. */
static int infer(uint32_t time_ms, uint32_t *detections, uint32_t *cycles)
{
	etch_method_t *m = &method;
	etch_status_t st;
	int8_t scores[NUM_LABELS];
	etch_kws_detection_t d;
	uint8_t hit;
	uint32_t t0 = k_cycle_get_32();

	st = etch_frontend_stream_features_int8(&stream, in_scale, in_zp, features,
						  ARRAY_SIZE(features), NULL);
	if (st == ETCH_OK) {
		st = etch_method_set_input(m, 0, features, sizeof(features));
	}
	if (st == ETCH_OK) {
#if defined(CONFIG_THREAD_STACK_INFO)
		/* The inference's own stack: painted below this frame, in this thread. */
		int painted = etch_zephyr_stack_paint(&stack_probe);

		st = etch_method_execute(m);
		if (painted == 0) {
			inference_stack = MAX(inference_stack, etch_zephyr_stack_used(&stack_probe));
		}
#else
		st = etch_method_execute(m);
#endif
	}
	const void *out = NULL;
	size_t out_len = 0;

	if (st == ETCH_OK) {
		st = etch_method_output(m, 0, &out, &out_len);
	}
	if (st == ETCH_OK && out_len != sizeof(scores)) {
		st = ETCH_INVALID_TYPE;
	}
	if (st == ETCH_OK) {
		memcpy(scores, out, sizeof(scores));
	}
	*cycles = k_cycle_get_32() - t0;
	if (st == ETCH_OK) {
		st = etch_kws_push_int8(&recognizer, time_ms, scores, NUM_LABELS, out_zp, &d,
					&hit);
	}
	if (st != ETCH_OK) {
		return fail("inference", st);
	}
#if DT_NODE_EXISTS(DT_ALIAS(led0))
	gpio_pin_set_dt(&led, hit);
#endif
	if (hit) {
		(*detections)++;
		LOG_INF("detected \"%s\" at %u ms (score %u/255)", labels[d.label],
			(unsigned int)d.time_ms, (unsigned int)d.score);
	}
	return 0;
}

int main(void)
{
	const struct device *const mic = DEVICE_DT_GET(DT_NODELABEL(dmic_dev));
	uint32_t hops = 0, detections = 0, inferences = 0, overruns = 0;
	uint64_t hop_cycles = 0, inference_cycles = 0;
	bool failed = false;
	int ret;

#if DT_NODE_EXISTS(DT_ALIAS(led0))
	if (gpio_is_ready_dt(&led)) {
		gpio_pin_configure_dt(&led, GPIO_OUTPUT_INACTIVE);
	}
#endif
	if (setup_model() || setup_recognizer() || start_microphone(mic)) {
		LOG_ERR("stopped: not listening");
#if defined(CONFIG_ARCH_POSIX)
		/* CONFIG_KWS_ERROR_EXIT_STATUS: 1, or 0 in twister's bad-input
		 * scenarios (twister fails a run that exits non-zero).
		 */
		posix_exit(CONFIG_KWS_ERROR_EXIT_STATUS);
#endif
		return 0;
	}
	LOG_INF("listening");
	for (;;) {
		void *block;
		size_t size;

		ret = dmic_read(mic, 0, &block, &size, CONFIG_KWS_READ_TIMEOUT_MS);
		if (ret == -ENODATA) {
			break; /* the virtual microphone's file ended */
		}
		if (ret == -EIO) {
			LOG_ERR("microphone read failed: %d (the audio ended early)", ret);
			failed = true;
			break;
		}
		if (ret < 0) {
			LOG_ERR("microphone read failed: %d (no audio for %d ms)", ret,
				CONFIG_KWS_READ_TIMEOUT_MS);
			failed = true;
			break;
		}
		uint32_t t0 = k_cycle_get_32();
		etch_status_t st = size == BLOCK_BYTES
					   ? etch_frontend_stream_push(&stream, &frontend, block, HOP)
					   : ETCH_INVALID_ARGUMENT;

		hop_cycles += k_cycle_get_32() - t0;
		k_mem_slab_free(&audio_slab, block);
		if (st != ETCH_OK) {
			fail("etch_frontend_stream_push", st);
			failed = true;
			break;
		}
		hops++;
		/* Once a second of audio is in, every EVERY_HOPS hops. */
		if (hops < SECOND_HOPS || (hops - SECOND_HOPS) % EVERY_HOPS) {
			continue;
		}
		uint32_t cycles;

		if (infer(hops * HOP_MS, &detections, &cycles)) {
			failed = true;
			break;
		}
		inferences++;
		inference_cycles += cycles;
		if (CONFIG_KWS_TEST_STALL_MS > 0) {
			/* Test hook: a CPU too slow for the audio. */
			k_msleep(CONFIG_KWS_TEST_STALL_MS);
		}
		if (OVERRUNS(mic) != overruns) {
			LOG_WRN("audio overrun: %u block(s) of 20 ms dropped so far: inference "
				"does not keep up with the microphone",
				(unsigned int)OVERRUNS(mic));
			overruns = OVERRUNS(mic);
		}
	}
	dmic_trigger(mic, DMIC_TRIGGER_STOP);
	LOG_INF("done: %u ms of audio, %u inferences, %u detections, %u overruns; per hop %u "
		"cycles, per inference %u cycles (%u Hz counter)",
		(unsigned int)(hops * HOP_MS), inferences, detections,
		(unsigned int)OVERRUNS(mic),
		hops ? (unsigned int)(hop_cycles / hops) : 0,
		inferences ? (unsigned int)(inference_cycles / inferences) : 0,
		(unsigned int)sys_clock_hw_cycles_per_sec());
#if defined(CONFIG_THREAD_STACK_INFO)
	if (inference_stack != 0) {
		LOG_INF("inference stack: %u B (limit %u B)", (unsigned int)inference_stack,
			(unsigned int)CONFIG_KWS_INFERENCE_STACK_LIMIT);
		if (inference_stack > CONFIG_KWS_INFERENCE_STACK_LIMIT) {
			LOG_ERR("FAIL: inference stack %u B above CONFIG_KWS_INFERENCE_STACK_LIMIT "
				"(%u B)", (unsigned int)inference_stack,
				(unsigned int)CONFIG_KWS_INFERENCE_STACK_LIMIT);
			failed = true;
		}
	} else {
		LOG_INF("inference stack: not measured (native_sim: its threads run on host "
			"stacks)");
	}
#endif
#if defined(CONFIG_THREAD_STACK_INFO) && defined(CONFIG_INIT_STACKS)
	size_t used;

	/* The whole thread's high-water mark, including before the paints. */
	if (etch_zephyr_stack_thread_used(&stack_probe, &used) == 0) {
		LOG_INF("main stack: %u of %u bytes used", (unsigned int)used,
			(unsigned int)k_current_get()->stack_info.size);
	}
#endif
	if (failed) {
		LOG_ERR("stopped on an error");
	}
#if defined(CONFIG_ARCH_POSIX)
	posix_exit(failed ? CONFIG_KWS_ERROR_EXIT_STATUS : 0);
#endif
	return failed ? -1 : 0;
}
