//! Slack added from the Control Center, against the Web API stand-in: an admin sets the app's
//! credentials (sealed: never in an answer or the audit log), "Add to Slack" gives Slack's page
//! with a state made for that admin, and the callback takes the state once, from that admin
//! alone, and trades the code for the bot token; the server then answers the app's signed
//! requests. A token Slack revoked turns the integration off, with an audit entry.

use std::sync::atomic::Ordering;

use llmtool_registry::Role;
use llmtool_testkit::Mock;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::slack::{SECRET, calls_now, now, post, stand_in};
use crate::support::{Library, PUBLIC_URL, SlackSetup, poet};

const CLIENT_SECRET: &str = "client-secret-4417";

/// The query parameter `name` of `url`.
fn parameter(url: &str, name: &str) -> String {
    let query = url.split_once('?').unwrap().1;
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query).unwrap();
    pairs.into_iter().find(|(key, _)| key == name).unwrap().1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_adds_slack_with_a_checked_state_and_a_revoked_token_turns_it_off() {
    let mock = Mock::start(vec![]).await;
    let slack = stand_in().await;
    let setup = SlackSetup::ControlCenter(slack.url.clone());
    let lib = Library::start_with_slack(&mock, &[("poet", poet())], &[], setup).await;
    let ada = lib.member("ada@example.test", Role::Admin, &[]).await;
    let bob = lib.member("bob@example.test", Role::Admin, &[]).await;
    let sam = lib.member("sam@example.test", Role::Viewer, &[]).await;
    let check = json!({"type": "url_verification", "challenge": "c-9"}).to_string();

    // Nothing set: Slack's routes are not there, and "Add to Slack" has nothing to add.
    let shown: Value =
        lib.call(Method::GET, "/control/slack".into(), &ada, None).await.json().await.unwrap();
    assert_eq!(
        (shown["source"].clone(), shown["answering"].clone()),
        (json!("none"), json!(false))
    );
    assert_eq!(shown["redirect_url"], format!("{PUBLIC_URL}/slack/oauth/callback"));
    assert_eq!(post(&lib, "/slack/events", &check, Some(now())).await.status(), 404);
    assert_eq!(
        lib.call(Method::POST, "/control/slack/install".into(), &ada, None).await.status(),
        409
    );

    // The credentials: admins only, checked, sealed at once.
    let credentials =
        json!({"client_id": "123.456", "client_secret": CLIENT_SECRET, "signing_secret": SECRET});
    let at = &lib;
    let put = |token: &str, body: Value| {
        let token = token.to_owned();
        async move { at.call(Method::PUT, "/control/slack".into(), &token, Some(body)).await }
    };
    assert_eq!(put(&sam, credentials.clone()).await.status(), 403);
    assert_eq!(
        put(&ada, json!({"client_id": "abc", "signing_secret": SECRET})).await.status(),
        400
    );
    let set = put(&ada, credentials).await;
    assert_eq!(set.status(), 200);
    let set = set.text().await.unwrap();
    assert!(!set.contains(CLIENT_SECRET) && !set.contains(SECRET), "{set}");
    let set: Value = serde_json::from_str(&set).unwrap();
    assert_eq!(
        (set["source"].clone(), set["app"]["enabled"].clone()),
        (json!("library"), json!(false))
    );
    assert_eq!(post(&lib, "/slack/events", &check, Some(now())).await.status(), 404);

    // "Add to Slack": Slack's page for this app, coming back to the server's callback.
    let start = |token: String| async move {
        let answer = at.call(Method::POST, "/control/slack/install".into(), &token, None).await;
        assert_eq!(answer.status(), 200);
        let url = answer.json::<Value>().await.unwrap()["url"].as_str().unwrap().to_owned();
        (parameter(&url, "state"), url)
    };
    let (state, url) = start(ada.clone()).await;
    let site = slack.url.trim_end_matches("/api");
    assert!(url.starts_with(&format!("{site}/oauth/v2/authorize?")), "{url}");
    assert_eq!(parameter(&url, "client_id"), "123.456");
    assert_eq!(parameter(&url, "redirect_uri"), format!("{PUBLIC_URL}/slack/oauth/callback"));
    assert!(parameter(&url, "scope").split(',').any(|scope| scope == "chat:write"));
    assert!(state.len() >= 32);

    // Slack sends the browser back. The state is good once, for the admin who started it.
    let browser =
        reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let root = lib.base.trim_end_matches("/api/v1").to_owned();
    let back = |token: &str, query: String| {
        browser.get(format!("{root}/slack/oauth/finish?{query}")).bearer_auth(token).send()
    };
    // Slack's redirect comes without the session: a page on the studio's site goes on to the
    // finish, with what Slack sent.
    let hop = browser.get(format!("{root}/slack/oauth/callback?code=good-code&state={state}"));
    let hop = hop.send().await.unwrap().text().await.unwrap();
    let next = format!("url=/slack/oauth/finish?code=good-code&amp;state={state}");
    assert!(hop.contains(&next), "{hop}");
    let (bobs_state, _) = start(bob.clone()).await;
    let stolen = back(&ada, format!("code=good-code&state={bobs_state}")).await.unwrap();
    assert_eq!(stolen.status(), 403, "a state made for another admin");
    let made_up = back(&ada, "code=good-code&state=0123456789abcdef".into()).await.unwrap();
    assert_eq!(made_up.status(), 403);
    assert!(calls_now(&slack.calls, "oauth.v2.access").is_empty());
    let done = back(&ada, format!("code=good-code&state={state}")).await.unwrap();
    assert_eq!(done.status(), 303);
    assert_eq!(done.headers()["location"], "/control/integrations?slack=installed");
    let traded = calls_now(&slack.calls, "oauth.v2.access");
    assert_eq!(traded.len(), 1);
    assert_eq!(traded[0]["client_secret"], CLIENT_SECRET);
    assert_eq!(traded[0]["code"], "good-code");
    let again = back(&ada, format!("code=good-code&state={state}")).await.unwrap();
    assert_eq!(again.status(), 403, "a state is good once");

    // Installed: the workspace shown, never the token, and Slack's signed requests answered.
    let shown =
        lib.call(Method::GET, "/control/slack".into(), &ada, None).await.text().await.unwrap();
    assert!(!shown.contains("xoxb-"), "{shown}");
    let shown: Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(shown["app"]["team_name"], "Acme");
    assert_eq!(shown["app"]["installed_by"], "ada@example.test");
    assert_eq!(
        (shown["app"]["enabled"].clone(), shown["answering"].clone()),
        (json!(true), json!(true))
    );
    let checked = post(&lib, "/slack/events", &check, Some(now())).await;
    assert_eq!(checked.status(), 200);
    assert_eq!(post(&lib, "/slack/events", &check, None).await.status(), 401);
    // The bot's calls carry the token the code was traded for.
    let channels = lib.call(Method::GET, "/slack/channels".into(), &sam, None).await;
    assert_eq!(channels.status(), 200);

    // Slack revokes the token: the integration is off, told in the Control Center and the
    // audit log, and Slack's requests are no longer answered.
    slack.faults.revoked.store(true, Ordering::SeqCst);
    let channels = lib.call(Method::GET, "/slack/channels".into(), &sam, None).await;
    assert_eq!(channels.status(), 409);
    assert!(slack.faults.refused.load(Ordering::SeqCst) >= 1);
    let shown: Value =
        lib.call(Method::GET, "/control/slack".into(), &ada, None).await.json().await.unwrap();
    assert_eq!(
        (shown["app"]["enabled"].clone(), shown["answering"].clone()),
        (json!(false), json!(false))
    );
    assert!(shown["app"]["disabled_reason"].as_str().unwrap().contains("token_revoked"), "{shown}");
    assert_eq!(post(&lib, "/slack/events", &check, Some(now())).await.status(), 404);
    let audit =
        lib.call(Method::GET, "/audit?target=slack".into(), &ada, None).await.text().await.unwrap();
    for secret in [CLIENT_SECRET, SECRET, "xoxb-installed-bot-token"] {
        assert!(!audit.contains(secret), "the audit log holds a secret: {audit}");
    }
    let audit: Value = serde_json::from_str(&audit).unwrap();
    let actions: Vec<&str> = audit["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["slack.disable", "slack.set", "slack.set"], "{audit}");

    // Removed: nothing is kept.
    assert_eq!(lib.call(Method::DELETE, "/control/slack".into(), &ada, None).await.status(), 204);
    let shown: Value =
        lib.call(Method::GET, "/control/slack".into(), &ada, None).await.json().await.unwrap();
    assert_eq!(shown["source"], "none");
}
