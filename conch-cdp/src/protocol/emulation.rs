//! The `Emulation` domain: the viewport.

use serde::Serialize;

use super::{Empty, command};

/// `Emulation.setDeviceMetricsOverride`: the page's viewport size and scale.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetDeviceMetricsOverride {
    /// Width in CSS pixels (0 disables the override).
    pub width: u32,
    /// Height in CSS pixels (0 disables the override).
    pub height: u32,
    /// Device scale factor (0 disables the override).
    pub device_scale_factor: f64,
    /// Whether to emulate a mobile device.
    pub mobile: bool,
}
command!(
    SetDeviceMetricsOverride,
    "Emulation.setDeviceMetricsOverride",
    Empty
);

/// `Emulation.setFocusEmulationEnabled`: the page behaves as if its window had focus, so
/// focus events, `document.hasFocus()` and typed keys work in a window that is not the
/// system's front one (every conversation's tab lives in a window of its own).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetFocusEmulationEnabled {
    /// Whether to emulate focus.
    pub enabled: bool,
}
command!(
    SetFocusEmulationEnabled,
    "Emulation.setFocusEmulationEnabled",
    Empty
);
