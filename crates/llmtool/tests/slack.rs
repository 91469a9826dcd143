//! `llmtool slack`: the app's manifest for the server's public address.

use crate::support::llmtool;

#[test]
fn the_manifest_points_slack_at_the_servers_routes() {
    let data = tempfile::tempdir().unwrap();
    let out = llmtool(
        data.path(),
        &["slack", "manifest", "--public-url", "https://tools.example.com/", "--name", "Tools"],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let manifest: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(manifest["display_information"]["name"], "Tools");
    assert_eq!(manifest["features"]["slash_commands"][0]["command"], "/llmtool");
    let settings = &manifest["settings"];
    assert_eq!(
        settings["event_subscriptions"]["request_url"],
        "https://tools.example.com/slack/events"
    );
    assert_eq!(
        settings["interactivity"]["request_url"],
        "https://tools.example.com/slack/interactivity"
    );
    let scopes = manifest["oauth_config"]["scopes"]["bot"].as_array().unwrap();
    assert!(scopes.iter().any(|s| s == "users:read.email"), "{scopes:?}");

    // Without an address, or with one that is not, it says what it needs.
    let unset = llmtool(
        data.path(),
        &["slack", "manifest"],
        &[("LLMTOOL_CONFIG", "/nonexistent/config.toml")],
    );
    let said = String::from_utf8_lossy(&unset.stderr);
    assert_eq!(unset.status.code(), Some(2), "{said}");
    assert!(said.contains("--public-url"), "{said}");
    let wrong =
        llmtool(data.path(), &["slack", "manifest", "--public-url", "tools.example.com"], &[]);
    assert_eq!(wrong.status.code(), Some(2));
}
