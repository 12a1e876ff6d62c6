//! The engine under test: its configuration (`lab.toml`), its build, and its bench formats.

pub mod command_build;
pub mod config;
pub mod openbench;
