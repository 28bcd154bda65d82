/*
 * Virtual PDM microphone: the DMIC API (<zephyr/audio/dmic.h>) over a WAV
 * file played in real time. On native_sim the file is read from the host
 * (--dmic-wav=FILE or the node's wav-file property); on other boards (QEMU
 * Cortex-M, for measuring a listening application where there is no
 * microphone) the wav-file is embedded in flash at build time. A k_timer fires once per PCM
 * block (block_size bytes at the configured rate, e.g. 20 ms); each expiry
 * takes a block from the application's memory slab, fills it with the next
 * samples of the file and queues it for dmic_read(). When the application
 * does not keep up, blocks are dropped and counted as overruns, as a real
 * DMIC driver drops them. At the end of the file dmic_read() returns
 * -ENODATA.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#define DT_DRV_COMPAT etch_virtual_dmic

#include <errno.h>
#include <string.h>

#include <zephyr/audio/dmic.h>
#include <zephyr/device.h>
#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>

#if defined(CONFIG_ARCH_POSIX)
#include "cmdline.h"
#include "nsi_host_trampolines.h"
#include "soc.h"
#endif

LOG_MODULE_REGISTER(etch_virtual_dmic, CONFIG_AUDIO_DMIC_LOG_LEVEL);

#define QUEUE_DEPTH 8

struct vdmic_data {
	struct k_mem_slab *slab;
	size_t block_size;
	uint32_t rate;
	struct k_timer timer;
	struct k_msgq queue;
	void *queue_buf[QUEUE_DEPTH];
	int fd;
	const char *path;
	uint32_t data_size; /* bytes of PCM the data chunk claims */
	uint32_t data_left; /* bytes of PCM left in the file */
	int error;          /* -EIO: the file ended before its data chunk did */
	bool configured;
	bool running;
	bool ended;
	uint32_t overruns;
};

#if defined(CONFIG_ARCH_POSIX)
static const char *wav_arg;

static void vdmic_wav_option(char *argv, int offset)
{
	wav_arg = argv + offset;
}

static void vdmic_add_options(void)
{
	static struct args_struct_t options[] = {
		{
			.option = "dmic-wav",
			.name = "FILE",
			.type = 's',
			.call_when_found = vdmic_wav_option,
			.descript = "16 kHz mono 16-bit PCM WAV file the virtual microphone plays",
		},
		ARG_TABLE_ENDMARKER,
	};

	native_add_command_line_opts(options);
}

NATIVE_TASK(vdmic_add_options, PRE_BOOT_1, 11);

static int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		long r = nsi_host_read(fd, (uint8_t *)buf + got, len - got);

		if (r <= 0) {
			break;
		}
		got += (size_t)r;
	}
	return (int)got;
}

static int wav_open(const char *path)
{
	return nsi_host_open(path, 0 /* O_RDONLY */);
}

static void wav_close(int fd)
{
	nsi_host_close(fd);
}
#else /* !CONFIG_ARCH_POSIX: the wav-file embedded at build time (CMakeLists.txt) */

static const uint8_t embedded_wav[] = {
#include "etch_virtual_dmic_wav.inc"
};
static const char *const wav_arg; /* the node's wav-file names it */
static size_t embedded_pos;

static int wav_open(const char *path)
{
	ARG_UNUSED(path);
	embedded_pos = 0;
	return 0;
}

static void wav_close(int fd)
{
	ARG_UNUSED(fd);
}

static int read_full(int fd, void *buf, size_t len)
{
	size_t n = MIN(len, sizeof(embedded_wav) - embedded_pos);

	ARG_UNUSED(fd);
	memcpy(buf, embedded_wav + embedded_pos, n);
	embedded_pos += n;
	return (int)n;
}
#endif

static uint32_t le32(const uint8_t *p)
{
	return p[0] | (p[1] << 8) | (p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* Opens the WAV file and positions it at the PCM data; checks the format. */
/* The file's name without its folders: the messages below name it so (a
 * long path made a log line longer than native_sim's console line, which
 * split it).
 */
static const char *file_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash != NULL ? slash + 1 : path;
}

static int vdmic_open(struct vdmic_data *d, const char *path)
{
	uint8_t hdr[12], chunk[8], fmt[16];

	d->fd = wav_open(path);
	if (d->fd < 0) {
		LOG_ERR("cannot open %s", path);
		return -ENOENT;
	}
	if (read_full(d->fd, hdr, sizeof(hdr)) != sizeof(hdr) || memcmp(hdr, "RIFF", 4) ||
	    memcmp(hdr + 8, "WAVE", 4)) {
		LOG_ERR("%s: not a WAV file", file_name(path));
		return -EINVAL;
	}
	bool have_fmt = false;

	while (read_full(d->fd, chunk, sizeof(chunk)) == sizeof(chunk)) {
		uint32_t size = le32(chunk + 4);

		if (!memcmp(chunk, "fmt ", 4) && size >= sizeof(fmt)) {
			if (read_full(d->fd, fmt, sizeof(fmt)) != sizeof(fmt)) {
				break;
			}
			uint16_t format = fmt[0] | (fmt[1] << 8);
			uint16_t channels = fmt[2] | (fmt[3] << 8);
			uint32_t rate = le32(fmt + 4);
			uint16_t bits = fmt[14] | (fmt[15] << 8);

			if (format != 1 || channels != 1 || bits != 16 || rate != d->rate) {
				LOG_ERR("%s: %u Hz, %u channel(s), %u-bit (format %u); the "
					"virtual microphone plays %u Hz mono 16-bit PCM",
					file_name(path), rate, channels, bits, format, d->rate);
				return -EINVAL;
			}
			have_fmt = true;
			/* Skip the rest of a longer fmt chunk (and its pad byte). */
			for (uint32_t skip = size - sizeof(fmt) + (size & 1); skip > 0; skip--) {
				uint8_t b;

				if (read_full(d->fd, &b, 1) != 1) {
					return -EINVAL;
				}
			}
		} else if (!memcmp(chunk, "data", 4) && have_fmt) {
			d->data_left = size & ~1u;
			d->data_size = d->data_left;
			d->path = path;
			return 0;
		} else {
			for (uint32_t skip = size + (size & 1); skip > 0; skip--) {
				uint8_t b;

				if (read_full(d->fd, &b, 1) != 1) {
					return -EINVAL;
				}
			}
		}
	}
	LOG_ERR("%s: no PCM data", file_name(path));
	return -EINVAL;
}

/* The file ended after `played` bytes of PCM, before its data chunk did:
 * the stream ends with -EIO (dmic_read()), not with silence.
 */
static void vdmic_truncated(struct vdmic_data *d, uint32_t played)
{
	void *end = NULL;

	LOG_ERR("%s: truncated WAV file: the data chunk says %u bytes, the file ends after %u",
		file_name(d->path), (unsigned int)d->data_size, (unsigned int)played);
	d->error = -EIO;
	d->data_left = 0;
	d->ended = true;
	k_timer_stop(&d->timer);
	(void)k_msgq_put(&d->queue, &end, K_NO_WAIT);
}

static void vdmic_tick(struct k_timer *timer)
{
	struct vdmic_data *d = CONTAINER_OF(timer, struct vdmic_data, timer);
	void *block;

	if (!d->running || d->ended) {
		return;
	}
	if (d->data_left == 0) {
		d->ended = true;
		k_timer_stop(&d->timer);
		/* Wake a reader waiting for the next block. */
		block = NULL;
		(void)k_msgq_put(&d->queue, &block, K_NO_WAIT);
		return;
	}
	if (k_mem_slab_alloc(d->slab, &block, K_NO_WAIT) != 0) {
		d->overruns++;
		/* The audio of this period is lost, as on a real microphone. */
		uint8_t skip[64];
		size_t left = MIN(d->block_size, d->data_left);

		while (left > 0) {
			size_t n = MIN(left, sizeof(skip));
			int got = read_full(d->fd, skip, n);

			if (got < (int)n) {
				vdmic_truncated(d, d->data_size - d->data_left + MAX(got, 0));
				return;
			}
			left -= n;
			d->data_left -= n;
		}
		return;
	}
	size_t n = MIN(d->block_size, d->data_left);
	int got = read_full(d->fd, block, n);

	if (got < (int)n) {
		/* As the host's `etch listen`: a file shorter than its header
		 * says is an error, not silence.
		 */
		k_mem_slab_free(d->slab, block);
		vdmic_truncated(d, d->data_size - d->data_left + MAX(got, 0));
		return;
	}
	if (got < (int)d->block_size) {
		/* The last block of a file that ends mid-block. */
		memset((uint8_t *)block + got, 0, d->block_size - got);
	}
	d->data_left -= n;
	if (k_msgq_put(&d->queue, &block, K_NO_WAIT) != 0) {
		d->overruns++;
		k_mem_slab_free(d->slab, block);
	}
}

static int vdmic_configure(const struct device *dev, struct dmic_cfg *cfg)
{
	struct vdmic_data *d = dev->data;
	struct pcm_stream_cfg *s = cfg->streams;

	if (d->running) {
		return -EBUSY;
	}
	if (s == NULL || cfg->channel.req_num_streams != 1 || cfg->channel.req_num_chan != 1 ||
	    s->pcm_width != 16 || s->mem_slab == NULL || s->block_size == 0 ||
	    (s->block_size & 1) || s->pcm_rate == 0) {
		LOG_ERR("the virtual microphone has one mono 16-bit stream");
		return -EINVAL;
	}
	if (s->block_size > s->mem_slab->info.block_size) {
		LOG_ERR("block size %u larger than the slab's blocks", s->block_size);
		return -EINVAL;
	}
	d->slab = s->mem_slab;
	d->block_size = s->block_size;
	d->rate = s->pcm_rate;
	cfg->channel.act_num_chan = 1;
	cfg->channel.act_num_streams = 1;
	cfg->channel.act_chan_map_lo = cfg->channel.req_chan_map_lo;
	cfg->channel.act_chan_map_hi = 0;

	const char *path = wav_arg ? wav_arg : DT_INST_PROP_OR(0, wav_file, NULL);

	if (path == NULL) {
		LOG_ERR("no WAV file: pass --dmic-wav=FILE");
		return -ENODEV;
	}
	if (d->fd >= 0) {
		wav_close(d->fd);
		d->fd = -1;
	}
	int ret = vdmic_open(d, path);

	if (ret < 0) {
		return ret;
	}
	d->configured = true;
	d->ended = false;
	d->error = 0;
	d->overruns = 0;
	LOG_INF("playing %s: %u ms", file_name(path),
		(unsigned int)(d->data_left / 2 * 1000 / d->rate));
	return 0;
}

static int vdmic_trigger(const struct device *dev, enum dmic_trigger cmd)
{
	struct vdmic_data *d = dev->data;
	void *block;

	switch (cmd) {
	case DMIC_TRIGGER_START:
	case DMIC_TRIGGER_RELEASE:
		if (!d->configured) {
			return -EIO;
		}
		d->running = true;
		k_timeout_t period = K_USEC((uint64_t)d->block_size / 2 * 1000000 / d->rate);

		k_timer_start(&d->timer, period, period);
		return 0;
	case DMIC_TRIGGER_STOP:
	case DMIC_TRIGGER_PAUSE:
		d->running = false;
		k_timer_stop(&d->timer);
		while (k_msgq_get(&d->queue, &block, K_NO_WAIT) == 0) {
			if (block != NULL) {
				k_mem_slab_free(d->slab, block);
			}
		}
		return 0;
	default:
		return -EINVAL;
	}
}

static int vdmic_read(const struct device *dev, uint8_t stream, void **buffer, size_t *size,
		      int32_t timeout)
{
	struct vdmic_data *d = dev->data;
	void *block;

	if (stream != 0 || !d->configured) {
		return -EINVAL;
	}
	if (d->ended && k_msgq_num_used_get(&d->queue) == 0) {
		return d->error ? d->error : -ENODATA;
	}
	if (k_msgq_get(&d->queue, &block, SYS_TIMEOUT_MS(timeout)) != 0) {
		return -EAGAIN;
	}
	if (block == NULL) {
		return d->error ? d->error : -ENODATA;
	}
	*buffer = block;
	*size = d->block_size;
	return 0;
}

/* Blocks dropped because the application did not keep up (a test hook). */
uint32_t etch_virtual_dmic_overruns(const struct device *dev)
{
	return ((struct vdmic_data *)dev->data)->overruns;
}

static int vdmic_init(const struct device *dev)
{
	struct vdmic_data *d = dev->data;

	d->fd = -1;
	k_timer_init(&d->timer, vdmic_tick, NULL);
	k_msgq_init(&d->queue, (char *)d->queue_buf, sizeof(void *), QUEUE_DEPTH);
	return 0;
}

static const struct _dmic_ops vdmic_ops = {
	.configure = vdmic_configure,
	.trigger = vdmic_trigger,
	.read = vdmic_read,
};

#define VDMIC_DEFINE(n)                                                                            \
	static struct vdmic_data vdmic_data_##n;                                                   \
	DEVICE_DT_INST_DEFINE(n, vdmic_init, NULL, &vdmic_data_##n, NULL, POST_KERNEL,             \
			      CONFIG_AUDIO_DMIC_INIT_PRIORITY, &vdmic_ops);

DT_INST_FOREACH_STATUS_OKAY(VDMIC_DEFINE)
