//! The shard selector on the wire: a `kube::Client` that adds `shardSelector` to the list
//! and watch requests of one informer and reads, from each list response, whether the
//! server applied it.
//!
//! kube 5's `ListParams` and `WatchParams` have no `shardSelector`, and kube-runtime's
//! watcher (which owns paging, relists, bookmarks and backoff) builds its requests from
//! them. Rather than re-implement the watcher, the informer hands it an `Api` whose client
//! rewrites the request: one query parameter more, nothing else changed.

use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use http::{Method, Request, Response, Uri};
use kube::Client;
use kube::client::Body;
use parking_lot::Mutex;
use serde::Deserialize;

use super::{ShardKey, ShardSelector};

/// What the API server did with a shard selector, as its list responses show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerFiltering {
    /// No list response seen yet (or only streaming lists, which carry no list metadata).
    Unknown,
    /// The server filtered: the list echoed the selector in `metadata.shardInfo.selector`.
    Applied,
    /// The server ignored the parameter (its feature gate `ShardedListAndWatch` is off) and
    /// sent every object: a list without `shardInfo`, or with objects outside the shard.
    Ignored,
    /// A list without `shardInfo` whose objects were all in the shard. kube-apiserver 1.37
    /// filters metadata-only lists (`PartialObjectMetadataList`) and lists of custom
    /// resources but drops `shardInfo` from both (they are encoded apart from built-in
    /// lists), so this is what a metadata-only informer, or an informer of a custom
    /// resource, sees from a server with the gate on (and what an empty list from any
    /// server looks like).
    Unconfirmed,
    /// The server echoed a different selector than the one sent (it is kept here).
    Different(String),
}

/// Shared between the request layer (which records) and the informer (which reports).
pub(crate) type Observed = Arc<Mutex<ServerFiltering>>;

/// A client that sends every GET with `shardSelector=<selector>` and records, from each
/// successful list response, whether the server applied the selector.
///
/// Builds a `kube::Client`, which spawns its request buffer: call it within a Tokio
/// runtime.
pub(crate) fn sharded_client(
    client: Client,
    selector: &ShardSelector,
    observed: Observed,
) -> Client {
    let default_ns = client.default_namespace().to_owned();
    let svc = AddShardSelector {
        client,
        selector: Arc::new(selector.clone()),
        rendered: Arc::from(selector.to_string()),
        observed,
    };
    Client::new(svc, default_ns)
}

#[derive(Clone)]
struct AddShardSelector {
    client: Client,
    selector: Arc<ShardSelector>,
    rendered: Arc<str>,
    observed: Observed,
}

/// `uri` with `shardSelector` appended to its query.
fn with_selector(uri: &Uri, rendered: &str) -> Result<Uri, http::Error> {
    let mut query = form_urlencoded::Serializer::new(uri.query().unwrap_or("").to_owned());
    query.append_pair("shardSelector", rendered);
    let pq = format!("{}?{}", uri.path(), query.finish());
    let mut parts = uri.clone().into_parts();
    parts.path_and_query = Some(pq.parse()?);
    Ok(Uri::from_parts(parts)?)
}

fn is_watch(uri: &Uri) -> bool {
    form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
        .any(|(k, v)| k == "watch" && (v == "true" || v == "1"))
}

#[derive(Deserialize)]
struct ListHead {
    metadata: Option<ListMetaHead>,
    #[serde(default)]
    items: Vec<ItemHead>,
}

#[derive(Deserialize)]
struct ListMetaHead {
    #[serde(rename = "shardInfo")]
    shard_info: Option<ShardInfo>,
}

#[derive(Deserialize)]
struct ItemHead {
    #[serde(default)]
    metadata: ItemMeta,
}

/// The two fields a shard key reads (not the whole ObjectMeta: managedFields is large).
#[derive(Deserialize, Default)]
struct ItemMeta {
    uid: Option<String>,
    namespace: Option<String>,
}

impl ItemMeta {
    fn key(&self, key: ShardKey) -> &str {
        match key {
            ShardKey::Uid => self.uid.as_deref(),
            ShardKey::Namespace => self.namespace.as_deref(),
        }
        .unwrap_or("")
    }
}

#[derive(Deserialize)]
struct ShardInfo {
    selector: String,
}

/// What a list response body says about the selector sent. The echo is the server's
/// canonical rendering, so it is compared as a selector, not as text. Without an echo,
/// an object outside the shard proves the selector was ignored; a list of only selected
/// objects is [`ServerFiltering::Unconfirmed`] (custom resource and metadata-only lists
/// lose the echo on a server that filters).
pub(crate) fn judge_list(body: &[u8], sent: &ShardSelector) -> ServerFiltering {
    let Ok(head) = serde_json::from_slice::<ListHead>(body) else {
        // Not a list (kube reports the decode error itself).
        return ServerFiltering::Unknown;
    };
    if let Some(info) = head.metadata.and_then(|m| m.shard_info) {
        return match info.selector.parse::<ShardSelector>() {
            Ok(echo) if echo == *sent => ServerFiltering::Applied,
            _ => ServerFiltering::Different(info.selector),
        };
    }
    let outside = head
        .items
        .iter()
        .any(|i| !sent.matches_value(i.metadata.key(sent.key())));
    if outside {
        ServerFiltering::Ignored
    } else {
        ServerFiltering::Unconfirmed
    }
}

impl tower::Service<Request<Body>> for AddShardSelector {
    type Response = Response<Body>;
    type Error = kube::Error;
    type Future = BoxFuture<'static, Result<Response<Body>, kube::Error>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // The inner client buffers; it waits in `send`.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut req: Request<Body>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            if req.method() != Method::GET {
                return this.client.send(req).await;
            }
            let list = !is_watch(req.uri());
            *req.uri_mut() =
                with_selector(req.uri(), &this.rendered).map_err(kube::Error::HttpError)?;
            let resp = this.client.send(req).await?;
            if !list || !resp.status().is_success() {
                return Ok(resp);
            }
            // kube reads a list response whole before decoding it, so holding its bytes
            // here costs no extra copy; the judgement skims them once more.
            let (parts, body) = resp.into_parts();
            let bytes = body.collect_bytes().await?;
            let verdict = judge_list(&bytes, &this.selector);
            if verdict != ServerFiltering::Unknown {
                *this.observed.lock() = verdict;
            }
            Ok(Response::from_parts(parts, Body::from(bytes)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sharding::{ShardKey, ShardRange};

    fn lower_half() -> ShardSelector {
        ShardSelector::new(ShardKey::Uid, [ShardRange::new(0, 1 << 63).unwrap()]).unwrap()
    }

    #[test]
    fn the_selector_joins_the_query_encoded() {
        let uri: Uri = "https://10.0.0.1:6443/api/v1/configmaps?limit=500&resourceVersion=0"
            .parse()
            .unwrap();
        let out = with_selector(&uri, &lower_half().to_string()).unwrap();
        assert_eq!(
            out.to_string(),
            "https://10.0.0.1:6443/api/v1/configmaps?limit=500&resourceVersion=0&shardSelector=\
             shardRange%28object.metadata.uid%2C+%270x0000000000000000%27%2C+%270x8000000000000000%27%29"
        );
        let back: Vec<_> = form_urlencoded::parse(out.query().unwrap().as_bytes())
            .filter(|(k, _)| k == "shardSelector")
            .map(|(_, v)| v.into_owned())
            .collect();
        assert_eq!(back, [lower_half().to_string()]);
        assert!(!is_watch(&uri));
        assert!(is_watch(
            &"/api/v1/configmaps?watch=true&timeoutSeconds=290"
                .parse()
                .unwrap()
        ));
        let bare = with_selector(&"/api/v1/pods".parse().unwrap(), "x").unwrap();
        assert_eq!(bare.to_string(), "/api/v1/pods?shardSelector=x");
    }

    #[test]
    fn list_responses_say_whether_the_server_filtered() {
        let sel = lower_half();
        let echoed = format!(
            r#"{{"kind":"ConfigMapList","metadata":{{"resourceVersion":"7","shardInfo":{{"selector":"{sel}"}}}},"items":[{{"metadata":{{"name":"a"}}}}]}}"#
        );
        assert_eq!(
            judge_list(echoed.as_bytes(), &sel),
            ServerFiltering::Applied
        );
        // No echo and nothing outside: a custom resource list from a filtering server
        // looks like this, and so does an empty list from any server.
        let plain = br#"{"kind":"ConfigMapList","metadata":{"resourceVersion":"7"},"items":[]}"#;
        assert_eq!(judge_list(plain, &sel), ServerFiltering::Unconfirmed);
        let other = r#"{"metadata":{"shardInfo":{"selector":"shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"}},"items":[]}"#;
        assert!(matches!(
            judge_list(other.as_bytes(), &sel),
            ServerFiltering::Different(s) if s.contains("0x8000000000000000")
        ));
        assert_eq!(judge_list(b"not json", &sel), ServerFiltering::Unknown);
        // Metadata-only lists lose shardInfo on the server: the items decide.
        let inside = (0..)
            .map(|i| format!("uid-{i}"))
            .find(|u| sel.matches_value(u))
            .unwrap();
        let outside = (0..)
            .map(|i| format!("uid-{i}"))
            .find(|u| !sel.matches_value(u))
            .unwrap();
        let meta_list = |uids: &[&str]| {
            let items: Vec<String> = uids
                .iter()
                .map(|u| format!(r#"{{"metadata":{{"name":"{u}","uid":"{u}"}}}}"#))
                .collect();
            format!(
                r#"{{"kind":"PartialObjectMetadataList","metadata":{{}},"items":[{}]}}"#,
                items.join(",")
            )
        };
        assert_eq!(
            judge_list(meta_list(&[&inside]).as_bytes(), &sel),
            ServerFiltering::Unconfirmed
        );
        assert_eq!(
            judge_list(meta_list(&[&inside, &outside]).as_bytes(), &sel),
            ServerFiltering::Ignored
        );
    }
}
