//! What the manager tells about time controls: the presets this daemon
//! knows (`Presets()`) and what a control means (`DescribeControl()`), from
//! the configuration alone (no board is involved).

use chessclock_core::views::{match_prose, ControlView, PresetView};

use crate::config::{builtin_presets, Config, ControlSpec};

/// Every preset, sorted by name: the config's own replace built-in ones of
/// the same name. A preset that does not resolve is listed with its error
/// as its prose (the daemon refuses such a config, so this is defensive).
pub fn list(config: &Config) -> Vec<PresetView> {
    config
        .preset_names()
        .into_iter()
        .map(|name| {
            let own = config.presets.get(&name);
            let description = match own {
                Some(ControlSpec::Table(table)) => table.description.clone(),
                Some(ControlSpec::Notation(_)) => None,
                None => builtin_presets()
                    .iter()
                    .find(|p| p.name == name)
                    .map(|p| p.description.to_owned()),
            };
            let (control, prose) = match config.resolve_control(&name) {
                Ok((control, _)) if control.white == control.black => {
                    (control.white.to_string(), match_prose(&control))
                }
                Ok((control, _)) => (
                    format!("{} / {}", control.white, control.black),
                    match_prose(&control),
                ),
                Err(error) => (String::new(), error),
            };
            PresetView {
                source: if own.is_some() { "config" } else { "builtin" }.to_owned(),
                name,
                control,
                prose,
                description,
            }
        })
        .collect()
}

/// What `control` (a notation or a preset name) means to this daemon.
pub fn describe(config: &Config, control: &str) -> Result<ControlView, String> {
    let (resolved, _) = config.resolve_control(control)?;
    Ok(ControlView::of(control, &resolved))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_have_prose_and_controls_describe_themselves() {
        let config = Config::default();
        let presets = list(&config);
        let rapid = presets.iter().find(|p| p.name == "fide-rapid").unwrap();
        assert_eq!(rapid.control, "900+10");
        assert_eq!(rapid.prose, "15 min; 10 s per move from move 1");
        assert_eq!(rapid.source, "builtin");
        let armageddon = presets.iter().find(|p| p.name == "armageddon").unwrap();
        assert_eq!(armageddon.control, "300 / 240");
        let view = describe(&config, "15+10").unwrap();
        assert_eq!(view.prose, "15 s; 10 s per move from move 1");
        assert_eq!(view.base_ms(), Some(15_000));
        assert!(describe(&config, "nonsense").is_err());
    }
}
