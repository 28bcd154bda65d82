// What bindgen generates from Zephyr's <zephyr/audio/dmic.h> for the items
// samples/keyword_spotting_rust uses (its build.rs allowlist), written out
// for tools/ci/zephyr-targets.sh, which compiles the sample without a Zephyr
// tree. Declarations only: nothing here runs.
#[repr(C)]
pub struct device {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct k_mem_slab {
    _opaque: [u8; 0],
}
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct pcm_stream_cfg {
    pub pcm_rate: u32,
    pub pcm_width: u8,
    pub block_size: u16,
    pub mem_slab: *mut k_mem_slab,
}
#[repr(C)]
#[derive(Debug, Default, Copy, Clone)]
pub struct pdm_io_cfg {
    pub min_pdm_clk_freq: u32,
    pub max_pdm_clk_freq: u32,
    pub min_pdm_clk_dc: u8,
    pub max_pdm_clk_dc: u8,
    pub pdm_clk_pol: u8,
    pub pdm_data_pol: u8,
    pub pdm_clk_skew: u32,
    pub pdm_data_skew: u32,
}
#[repr(C)]
#[derive(Debug, Default, Copy, Clone)]
pub struct pdm_chan_cfg {
    pub req_chan_map_lo: u32,
    pub req_chan_map_hi: u32,
    pub act_chan_map_lo: u32,
    pub act_chan_map_hi: u32,
    pub req_num_chan: u8,
    pub act_num_chan: u8,
    pub req_num_streams: u8,
    pub act_num_streams: u8,
}
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dmic_cfg {
    pub io: pdm_io_cfg,
    pub streams: *mut pcm_stream_cfg,
    pub channel: pdm_chan_cfg,
}
impl Default for dmic_cfg {
    fn default() -> Self {
        dmic_cfg {
            io: pdm_io_cfg::default(),
            streams: ::core::ptr::null_mut(),
            channel: pdm_chan_cfg::default(),
        }
    }
}
pub type pdm_lr = ::core::ffi::c_uint;
pub const pdm_lr_PDM_CHAN_LEFT: pdm_lr = 0;
pub const pdm_lr_PDM_CHAN_RIGHT: pdm_lr = 1;
pub type dmic_trigger = ::core::ffi::c_uint;
pub const dmic_trigger_DMIC_TRIGGER_STOP: dmic_trigger = 0;
pub const dmic_trigger_DMIC_TRIGGER_PAUSE: dmic_trigger = 1;
pub const dmic_trigger_DMIC_TRIGGER_RELEASE: dmic_trigger = 2;
pub const dmic_trigger_DMIC_TRIGGER_START: dmic_trigger = 3;
pub const dmic_trigger_DMIC_TRIGGER_RESET: dmic_trigger = 4;
extern "C" {
    #[link_name = "dmic_build_channel_map__extern"]
    pub fn dmic_build_channel_map(channel: u8, pdm: u8, lr: pdm_lr) -> u32;
    #[link_name = "dmic_configure__extern"]
    pub fn dmic_configure(dev: *const device, cfg: *mut dmic_cfg) -> ::core::ffi::c_int;
    #[link_name = "dmic_trigger__extern"]
    pub fn dmic_trigger(dev: *const device, cmd: dmic_trigger) -> ::core::ffi::c_int;
    #[link_name = "dmic_read__extern"]
    pub fn dmic_read(
        dev: *const device,
        stream: u8,
        buffer: *mut *mut ::core::ffi::c_void,
        size: *mut usize,
        timeout: i32,
    ) -> ::core::ffi::c_int;
}
