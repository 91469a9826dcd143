//! `fetch_url` against a page served on 127.0.0.1: reached only where the operator allowed
//! that address, the metadata service and other schemes refused before any connection, and
//! every redirect checked again.

use llmtool_functions::Fetcher;

use crate::support::{Page, serve};

const PAGE: &str = "<html><head><title>Menu</title><script>steal()</script></head>\
    <body><h1>Today</h1><p>Soup of the day: <b>lentil</b>.</p></body></html>";

#[tokio::test]
async fn a_local_page_is_read_only_where_the_operator_allowed_its_address() {
    let site = serve(vec![("/menu", Page::html(PAGE))]).await;
    let refused = Fetcher::new(&[]).fetch(&site.url("/menu")).await.unwrap_err();
    assert!(refused.contains("is a loopback address (127.0.0.1)"), "{refused}");
    assert_eq!(site.hits(), 0, "refused before connecting");
    let text = Fetcher::new(&["127.0.0.1".into()]).fetch(&site.url("/menu")).await.unwrap();
    assert!(text.contains("Soup of the day: lentil."), "{text}");
    assert!(!text.contains("steal()"), "scripts are not text: {text}");
    let by_name = Fetcher::new(&["LOCALHOST".into()]);
    let port = site.address.port();
    assert!(by_name.fetch(&format!("http://localhost:{port}/menu")).await.is_ok());
}

#[tokio::test]
async fn the_metadata_service_and_other_schemes_are_refused() {
    let fetcher = Fetcher::new(&["127.0.0.1".into()]);
    let metadata = fetcher.fetch("http://169.254.169.254/latest/meta-data/").await.unwrap_err();
    assert_eq!(
        metadata,
        "`169.254.169.254` is a link-local address (169.254.169.254), which fetch_url may not reach unless the operator allows it"
    );
    for url in ["file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1/"] {
        let refused = fetcher.fetch(url).await.unwrap_err();
        assert!(refused.contains("only http and https"), "{url}: {refused}");
    }
    let ipv6 = fetcher.fetch("http://[::ffff:169.254.169.254]/").await.unwrap_err();
    assert!(ipv6.contains("link-local"), "{ipv6}");
}

#[tokio::test]
async fn a_redirect_is_checked_again() {
    let site = serve(vec![
        ("/away", Page::redirect("http://169.254.169.254/latest/meta-data/")),
        ("/here", Page::redirect("/menu")),
        ("/menu", Page::html(PAGE)),
        ("/loop", Page::redirect("/loop")),
    ])
    .await;
    let fetcher = Fetcher::new(&["127.0.0.1".into()]);
    let away = fetcher.fetch(&site.url("/away")).await.unwrap_err();
    assert!(away.contains("169.254.169.254"), "{away}");
    let here = fetcher.fetch(&site.url("/here")).await.unwrap();
    assert!(here.contains("lentil"));
    let looping = fetcher.fetch(&site.url("/loop")).await.unwrap_err();
    assert_eq!(looping, "more than 5 redirects; stopped");
}

#[tokio::test]
async fn a_page_over_the_bound_is_refused() {
    let big = format!("<html><body>{}</body></html>", "word ".repeat(300_000));
    let site = serve(vec![("/big", Page::html(&big))]).await;
    let mut fetcher = Fetcher::new(&["127.0.0.1".into()]);
    fetcher.limits.bytes = 64 * 1024;
    let refused = fetcher.fetch(&site.url("/big")).await.unwrap_err();
    assert_eq!(refused, "the page is larger than 65536 bytes");
}
