//! Structured logs: control-side events (hot swaps, placement moves, HTTP requests, route
//! synchronisation) as `tracing` events, written to standard error at or above a level, as
//! text or one JSON object per line. Click's own messages (configuration errors, `Print`,
//! handler values) are not log events and are printed as Click prints them.

use std::str::FromStr;

use tracing_subscriber::filter::LevelFilter;

/// How log events are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// `TIME LEVEL target: message key=value...`, one line per event.
    Text,
    /// One JSON object per line (`timestamp`, `level`, `fields`, `target`).
    Json,
}

impl FromStr for LogFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<LogFormat, String> {
        match s {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            _ => Err(format!("log format '{s}' is neither 'text' nor 'json'")),
        }
    }
}

/// Parses a level name: `off`, `error`, `warn`, `info`, `debug` or `trace`.
pub fn parse_level(s: &str) -> Result<LevelFilter, String> {
    LevelFilter::from_str(&s.to_ascii_lowercase())
        .map_err(|_| format!("log level '{s}' is not one of off, error, warn, info, debug, trace"))
}

/// Installs the process's log writer: events at `level` or more severe, in `format`, on
/// standard error.
pub fn init(level: LevelFilter, format: LogFormat) {
    let builder = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(std::io::stderr);
    // A second installation (none happens in the command) would be refused; nothing to do.
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_and_formats_parse_and_bad_ones_are_named() {
        assert_eq!(parse_level("INFO"), Ok(LevelFilter::INFO));
        assert_eq!(parse_level("off"), Ok(LevelFilter::OFF));
        assert!(parse_level("loud").unwrap_err().contains("'loud'"));
        assert_eq!("json".parse(), Ok(LogFormat::Json));
        assert!("xml".parse::<LogFormat>().unwrap_err().contains("'xml'"));
    }
}
