//! Slack for llmtool's team server, the parts that need no server: a request from Slack
//! verified by its signature ([`signature`]), Slack's payloads read ([`payloads`]), an answer
//! laid out as Block Kit messages within Slack's limits ([`blocks`]), a tool's variables as a
//! modal and back ([`modal`]), the app's manifest ([`manifest`]), and the Web API client,
//! which waits out rate limits and tells a revoked token apart ([`web_api`]).
//!
//! The server (`llmtool-server`) routes Slack's requests, maps Slack users to members, runs
//! the tools and keeps conversations in step with their channels.

pub mod blocks;
pub mod manifest;
pub mod modal;
pub mod payloads;
pub mod signature;
pub mod web_api;

pub use signature::{Refusal, Verifier};
pub use web_api::{WebApi, WebApiError};
