//! The HTTP side: request routing, the action log and reactors, JSON responses, watch
//! streams and discovery documents.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body::Frame;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use kube::core::Status;
use serde_json::{Value, json};
use tokio::sync::broadcast;
use tokio::time::Sleep;

use super::store::{
    ObjectKey, PatchKind, PatchOptions, Preconditions, Selectors, StoredEvent, WatchFilter,
    WatchStart,
};
use super::{Action, FakeResource, Shared, Verb, errors};

/// The response body type of the fake service: a buffered JSON document or a watch stream.
pub type ResponseBody = UnsyncBoxBody<Bytes, Infallible>;

fn full_body(bytes: impl Into<Bytes>) -> ResponseBody {
    Full::new(bytes.into()).boxed_unsync()
}

fn json_response(code: StatusCode, v: &Value) -> Response<ResponseBody> {
    let bytes = serde_json::to_vec(v).unwrap_or_default();
    Response::builder()
        .status(code)
        .header(header::CONTENT_TYPE, "application/json")
        .body(full_body(bytes))
        .expect("valid response")
}

pub(crate) fn status_response(s: &Status) -> Response<ResponseBody> {
    let code = StatusCode::from_u16(s.code)
        .ok()
        .filter(|c| c.is_client_error() || c.is_server_error())
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut s = s.clone();
    s.code = code.as_u16();
    json_response(code, &errors::to_json(&s))
}

// ----- query strings -----

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match u8::from_str_radix(
                    std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz"),
                    16,
                ) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Decoded query parameters, in order.
#[derive(Debug, Default)]
pub(crate) struct Query(Vec<(String, String)>);

impl Query {
    pub(crate) fn parse(q: &str) -> Self {
        Query(
            q.split('&')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once('=').unwrap_or((p, ""));
                    (percent_decode(k), percent_decode(v))
                })
                .collect(),
        )
    }

    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }
}

// ----- paths -----

/// A parsed resource URL.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub group: String,
    pub version: String,
    pub plural: String,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub subresource: Option<String>,
}

/// `/api/v1/[namespaces/{ns}/]{plural}[/{name}[/{sub}]]` and the `/apis/{group}/{version}/...`
/// equivalent. `None` for anything else.
fn parse_path(path: &str) -> Option<Target> {
    let segs: Vec<String> = path
        .trim_matches('/')
        .split('/')
        .map(percent_decode)
        .collect();
    let (group, version, rest) = match segs.first()?.as_str() {
        "api" if segs.len() >= 3 => (String::new(), segs[1].clone(), &segs[2..]),
        "apis" if segs.len() >= 4 => (segs[1].clone(), segs[2].clone(), &segs[3..]),
        _ => return None,
    };
    // `namespaces/{ns}/{plural}...` is a namespaced path, except for the namespace
    // resource's own subresources (`namespaces/{name}/status`, `.../finalize`).
    let namespace_path = rest[0] == "namespaces"
        && rest.len() >= 3
        && !(group.is_empty()
            && rest.len() == 3
            && matches!(rest[2].as_str(), "status" | "finalize"));
    let (namespace, rest) = if namespace_path {
        (Some(rest[1].clone()), &rest[2..])
    } else {
        (None, rest)
    };
    if rest.len() > 3 || rest.iter().any(String::is_empty) {
        return None;
    }
    Some(Target {
        group,
        version,
        plural: rest[0].clone(),
        namespace,
        name: rest.get(1).cloned(),
        subresource: rest.get(2).cloned(),
    })
}

fn verb_for(method: &Method, target: &Target, query: &Query) -> Result<Verb, Status> {
    let named = target.name.is_some();
    let sub = target.subresource.is_some();
    Ok(match *method {
        Method::GET if !named => {
            if query.flag("watch") {
                Verb::Watch
            } else {
                Verb::List
            }
        }
        Method::GET => Verb::Get,
        Method::POST if !named || sub => Verb::Create,
        Method::PUT if named => Verb::Update,
        Method::PATCH if named => Verb::Patch,
        Method::DELETE if !named => Verb::DeleteCollection,
        Method::DELETE if !sub => Verb::Delete,
        _ => return Err(errors::method_not_allowed()),
    })
}

// ----- presentation -----

/// How objects are rendered for one request: the requested version's apiVersion/kind, or
/// `PartialObjectMetadata` when the client asked for metadata only.
struct Presenter {
    api_version: String,
    kind: String,
    metadata_only: bool,
}

impl Presenter {
    fn new(res: &FakeResource, accept: &str) -> Self {
        Presenter {
            api_version: res.api_version(),
            kind: res.kind.clone(),
            metadata_only: accept.contains("as=PartialObjectMetadata"),
        }
    }

    fn object(&self, mut v: Value) -> Value {
        if self.metadata_only {
            return json!({
                "apiVersion": "meta.k8s.io/v1",
                "kind": "PartialObjectMetadata",
                "metadata": v.get("metadata").cloned().unwrap_or_else(|| json!({})),
            });
        }
        if let Value::Object(map) = &mut v {
            map.insert("apiVersion".into(), self.api_version.clone().into());
            map.insert("kind".into(), self.kind.clone().into());
        }
        v
    }

    fn list(&self, items: Vec<Value>, metadata: Value) -> Value {
        let items: Vec<Value> = items.into_iter().map(|v| self.object(v)).collect();
        if self.metadata_only {
            json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadataList", "metadata": metadata, "items": items})
        } else {
            json!({"apiVersion": self.api_version, "kind": format!("{}List", self.kind), "metadata": metadata, "items": items})
        }
    }

    fn bookmark(&self, rv: u64, initial_events_end: bool) -> Value {
        let mut metadata = json!({"resourceVersion": rv.to_string()});
        if initial_events_end {
            metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let (api_version, kind) = if self.metadata_only {
            (
                "meta.k8s.io/v1".to_string(),
                "PartialObjectMetadata".to_string(),
            )
        } else {
            (self.api_version.clone(), self.kind.clone())
        };
        json!({"apiVersion": api_version, "kind": kind, "metadata": metadata})
    }
}

fn event_line(event_type: &str, object: Value) -> Bytes {
    let mut line =
        serde_json::to_vec(&json!({"type": event_type, "object": object})).unwrap_or_default();
    line.push(b'\n');
    Bytes::from(line)
}

// ----- the request handler -----

pub(crate) async fn handle(
    shared: Arc<Shared>,
    req: Request<kube::client::Body>,
) -> Response<ResponseBody> {
    let (parts, body) = req.into_parts();
    let bytes = match body.collect().await {
        Ok(c) => c.to_bytes(),
        Err(e) => {
            return status_response(&errors::bad_request(&format!(
                "reading the request body: {e}"
            )));
        }
    };
    respond(&shared, &parts, &bytes)
}

fn header_str(parts: &http::request::Parts, name: header::HeaderName) -> &str {
    parts
        .headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

fn respond(shared: &Shared, parts: &http::request::Parts, bytes: &Bytes) -> Response<ResponseBody> {
    let path = parts.uri.path();
    let query = Query::parse(parts.uri.query().unwrap_or_default());
    let accept = header_str(parts, header::ACCEPT);
    if let Some(resp) = discovery(shared, &parts.method, path, accept) {
        return resp;
    }
    let Some(target) = parse_path(path) else {
        return status_response(&errors::resource_not_found());
    };
    let verb = match verb_for(&parts.method, &target, &query) {
        Ok(v) => v,
        Err(s) => return status_response(&s),
    };
    let body: Result<Option<Value>, String> = if bytes.is_empty() {
        Ok(None)
    } else {
        serde_json::from_slice(bytes)
            .map(Some)
            .map_err(|e| e.to_string())
    };
    let content_type = header_str(parts, header::CONTENT_TYPE);
    let action = Action {
        verb,
        group: target.group.clone(),
        version: target.version.clone(),
        resource: target.plural.clone(),
        subresource: target.subresource.clone(),
        namespace: target.namespace.clone(),
        name: target.name.clone(),
        object: body.as_ref().ok().cloned().flatten(),
        patch_type: (verb == Verb::Patch).then(|| {
            content_type
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_string()
        }),
        label_selector: query
            .get("labelSelector")
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        field_selector: query
            .get("fieldSelector")
            .filter(|s| !s.is_empty())
            .map(str::to_string),
    };
    shared.actions.lock().push(action.clone());

    let reactors: Vec<_> = shared.reactors.read().iter().cloned().collect();
    for reactor in reactors {
        if !reactor.handles(&action) {
            continue;
        }
        if let Some(result) = (reactor.react)(&action) {
            return match result {
                Err(status) => status_response(&status),
                Ok(v) if verb == Verb::Watch => {
                    let events = match v {
                        Value::Array(events) => events,
                        other => vec![other],
                    };
                    let mut out = Vec::new();
                    for e in events {
                        out.extend(serde_json::to_vec(&e).unwrap_or_default());
                        out.push(b'\n');
                    }
                    Response::builder()
                        .status(StatusCode::OK)
                        .header(header::CONTENT_TYPE, "application/json")
                        .body(full_body(out))
                        .expect("valid response")
                }
                Ok(v) => {
                    let code = if verb == Verb::Create {
                        StatusCode::CREATED
                    } else {
                        StatusCode::OK
                    };
                    json_response(code, &v)
                }
            };
        }
    }

    let body = match body {
        Ok(b) => b,
        Err(e) => {
            return status_response(&errors::bad_request(&format!(
                "the request body is not JSON: {e}"
            )));
        }
    };
    let user_agent = header_str(parts, header::USER_AGENT);
    match dispatch(
        shared,
        &target,
        verb,
        &query,
        body,
        content_type,
        accept,
        user_agent,
    ) {
        Ok(resp) => resp,
        Err(status) => status_response(&status),
    }
}

fn dry_run(query: &Query) -> bool {
    query.get("dryRun").is_some_and(|v| !v.is_empty())
}

#[allow(clippy::too_many_arguments)] // one request's parts, taken apart once in `respond`
fn dispatch(
    shared: &Shared,
    target: &Target,
    verb: Verb,
    query: &Query,
    body: Option<Value>,
    content_type: &str,
    accept: &str,
    user_agent: &str,
) -> Result<Response<ResponseBody>, Status> {
    let mut store = shared.store.lock();
    let res = store
        .find_resource(&target.group, &target.version, &target.plural)
        .cloned()
        .ok_or_else(errors::resource_not_found)?;
    let collection_verb = matches!(verb, Verb::List | Verb::Watch | Verb::DeleteCollection);
    if res.namespaced && target.namespace.is_none() && !collection_verb {
        return Err(errors::resource_not_found());
    }
    if !res.namespaced && target.namespace.is_some() {
        return Err(errors::resource_not_found());
    }
    let status_only = match target.subresource.as_deref() {
        None => false,
        Some("status") if res.status_subresource => {
            if !matches!(verb, Verb::Get | Verb::Update | Verb::Patch) {
                return Err(errors::method_not_allowed());
            }
            true
        }
        Some(_) => return Err(errors::resource_not_found()),
    };
    let ns = target.namespace.as_deref();
    let name = target.name.as_deref().unwrap_or_default();
    let presenter = Presenter::new(&res, accept);
    let write_opts = PatchOptions {
        field_manager: query.get("fieldManager"),
        user_agent,
        force: query.flag("force"),
        status_only,
        dry_run: dry_run(query),
    };
    validate_write_options(verb, content_type, &write_opts)?;
    let require_body = || {
        body.clone()
            .ok_or_else(|| errors::bad_request("the request has no body"))
    };

    Ok(match verb {
        Verb::Get => json_response(
            StatusCode::OK,
            &presenter.object(store.get(&res, ns, name)?),
        ),
        Verb::List => {
            let selectors =
                Selectors::parse(query.get("labelSelector"), query.get("fieldSelector"))?;
            let limit = match query.get("limit").filter(|l| !l.is_empty()) {
                Some(l) => Some(
                    l.parse::<usize>()
                        .map_err(|_| errors::bad_request(&format!("invalid limit {l:?}")))?,
                ),
                None => None,
            };
            let after = match query.get("continue").filter(|c| !c.is_empty()) {
                Some(token) => Some(
                    decode_continue(token)
                        .ok_or_else(|| errors::bad_request("continue key is not valid"))?,
                ),
                None => None,
            };
            let (items, remaining) = store.list(
                &res,
                ns,
                &selectors,
                limit,
                after.as_ref().map(|(a, b)| (a.as_str(), b.as_str())),
            );
            let mut metadata = json!({"resourceVersion": store.resource_version().to_string()});
            if remaining > 0
                && let Some(last) = items.last()
            {
                let key = (
                    super::store::meta_str(last, "namespace")
                        .unwrap_or_default()
                        .to_string(),
                    super::store::meta_str(last, "name")
                        .unwrap_or_default()
                        .to_string(),
                );
                metadata["continue"] = encode_continue(&key).into();
                metadata["remainingItemCount"] = remaining.into();
            }
            json_response(StatusCode::OK, &presenter.list(items, metadata))
        }
        Verb::Watch => {
            let selectors =
                Selectors::parse(query.get("labelSelector"), query.get("fieldSelector"))?;
            let rv = query.get("resourceVersion").unwrap_or_default();
            let start = if query.flag("sendInitialEvents") {
                WatchStart::CurrentState { bookmark: true }
            } else if rv.is_empty() || rv == "0" {
                WatchStart::CurrentState { bookmark: false }
            } else {
                WatchStart::After(rv.parse().map_err(|_| {
                    errors::bad_request(&format!("invalid resource version {rv:?}"))
                })?)
            };
            let filter = WatchFilter {
                group: res.group.clone(),
                plural: res.plural.clone(),
                namespace: if res.namespaced {
                    ns.map(str::to_string)
                } else {
                    None
                },
                selectors,
            };
            let timeout = query
                .get("timeoutSeconds")
                .and_then(|t| t.parse::<u64>().ok())
                .filter(|t| *t > 0)
                .map(Duration::from_secs);
            let mut pending = VecDeque::new();
            let receiver = match store.watch(&res, &filter, start) {
                Ok(setup) => {
                    for (t, obj) in setup.initial {
                        pending.push_back(event_line(t, presenter.object(obj)));
                    }
                    if let Some(rv) = setup.bookmark_rv {
                        pending.push_back(event_line("BOOKMARK", presenter.bookmark(rv, true)));
                    }
                    Some(setup.receiver)
                }
                // Like the apiserver: a 200 response whose only event is the ERROR.
                Err(status) => {
                    pending.push_back(event_line("ERROR", errors::to_json(&status)));
                    None
                }
            };
            drop(store);
            watch_response(LiveWatch {
                pending,
                receiver,
                filter,
                presenter,
                deadline: timeout.map(|t| Box::pin(tokio::time::sleep(t))),
            })
        }
        Verb::Create => {
            if target.name.is_some() {
                // Subresource creates (eviction, token, ...) are not emulated.
                return Err(errors::resource_not_found());
            }
            let manager = super::store::update_manager(&write_opts);
            let obj = store.create(
                &res,
                ns,
                require_body()?,
                true,
                dry_run(query),
                Some(&manager),
            )?;
            json_response(StatusCode::CREATED, &presenter.object(obj))
        }
        Verb::Update => {
            let manager = super::store::update_manager(&write_opts);
            let obj = store.update(
                &res,
                ns,
                name,
                require_body()?,
                status_only,
                dry_run(query),
                &manager,
            )?;
            json_response(StatusCode::OK, &presenter.object(obj))
        }
        Verb::Patch => {
            let kind = PatchKind::from_content_type(content_type)
                .ok_or_else(|| errors::unsupported_media_type(content_type))?;
            let (obj, created) =
                store.patch(&res, ns, name, kind, &require_body()?, &write_opts)?;
            let code = if created {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            };
            json_response(code, &presenter.object(obj))
        }
        Verb::Delete => {
            let opts = body.unwrap_or(Value::Null);
            let pre = Preconditions {
                uid: opts
                    .pointer("/preconditions/uid")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                resource_version: opts
                    .pointer("/preconditions/resourceVersion")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            };
            let dry = dry_run(query)
                || opts
                    .get("dryRun")
                    .and_then(Value::as_array)
                    .is_some_and(|a| !a.is_empty());
            let obj = store.delete(&res, ns, name, &pre, dry)?;
            let key = ObjectKey::new(&res, ns, name);
            // 202 Accepted while finalizers hold the object, 200 once it is gone.
            let code = if !dry && store.object(&key).is_some() {
                StatusCode::ACCEPTED
            } else {
                StatusCode::OK
            };
            json_response(code, &presenter.object(obj))
        }
        Verb::DeleteCollection => {
            let selectors =
                Selectors::parse(query.get("labelSelector"), query.get("fieldSelector"))?;
            let opts = body.unwrap_or(Value::Null);
            let dry = dry_run(query)
                || opts
                    .get("dryRun")
                    .and_then(Value::as_array)
                    .is_some_and(|a| !a.is_empty());
            let items = store.delete_collection(&res, ns, &selectors, dry)?;
            let metadata = json!({"resourceVersion": store.resource_version().to_string()});
            json_response(StatusCode::OK, &presenter.list(items, metadata))
        }
    })
}

/// The API server's `ValidateCreateOptions` / `ValidateUpdateOptions` /
/// `ValidatePatchOptions`, checked before the object is looked at: apply needs a
/// `fieldManager`, and a field manager is at most 128 bytes.
fn validate_write_options(
    verb: Verb,
    content_type: &str,
    opts: &PatchOptions<'_>,
) -> Result<(), Status> {
    let options_kind = match verb {
        Verb::Create => "CreateOptions",
        Verb::Update => "UpdateOptions",
        Verb::Patch => "PatchOptions",
        _ => return Ok(()),
    };
    let manager = opts.field_manager.unwrap_or_default();
    let mut causes: Vec<(&str, String)> = Vec::new();
    if verb == Verb::Patch
        && PatchKind::from_content_type(content_type) == Some(PatchKind::Apply)
        && manager.is_empty()
    {
        causes.push((
            "fieldManager",
            "Required value: is required for apply patch".into(),
        ));
    }
    if manager.len() > 128 {
        causes.push((
            "fieldManager",
            "Too long: may not be more than 128 bytes".into(),
        ));
    }
    if causes.is_empty() {
        return Ok(());
    }
    let causes: Vec<(&str, &str)> = causes.iter().map(|(f, m)| (*f, m.as_str())).collect();
    Err(errors::invalid("meta.k8s.io", options_kind, "", &causes))
}

fn encode_continue(key: &(String, String)) -> String {
    serde_json::to_string(key)
        .unwrap_or_default()
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn decode_continue(token: &str) -> Option<(String, String)> {
    if !token.len().is_multiple_of(2) || !token.is_ascii() {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..token.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&token[i..i + 2], 16).ok())
        .collect();
    serde_json::from_slice(&bytes?).ok()
}

// ----- watch streams -----

/// A running watch: lines to send at once, then live events until the deadline.
struct LiveWatch {
    pending: VecDeque<Bytes>,
    receiver: Option<broadcast::Receiver<Arc<StoredEvent>>>,
    filter: WatchFilter,
    presenter: Presenter,
    deadline: Option<Pin<Box<Sleep>>>,
}

async fn wait_for(deadline: &mut Option<Pin<Box<Sleep>>>) {
    match deadline {
        Some(sleep) => sleep.as_mut().await,
        None => std::future::pending().await,
    }
}

impl LiveWatch {
    async fn next_line(mut self) -> Option<(Result<Frame<Bytes>, Infallible>, Self)> {
        if let Some(line) = self.pending.pop_front() {
            return Some((Ok(Frame::data(line)), self));
        }
        loop {
            let receiver = self.receiver.as_mut()?;
            // `biased`: once the timeout has passed the stream ends, even with events
            // queued (the client resumes from its last resourceVersion).
            let received = tokio::select! {
                biased;
                () = wait_for(&mut self.deadline) => return None,
                r = receiver.recv() => r,
            };
            match received {
                Ok(ev) => {
                    if let Some((t, obj)) = self.filter.apply(&ev) {
                        let line = event_line(t, self.presenter.object(obj));
                        return Some((Ok(Frame::data(line)), self));
                    }
                }
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    // The watcher fell too far behind; like the apiserver, end it with 410.
                    self.receiver = None;
                    let status = errors::expired(&format!(
                        "watch fell behind by {n} events; too old resource version"
                    ));
                    let line = event_line("ERROR", errors::to_json(&status));
                    return Some((Ok(Frame::data(line)), self));
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

fn watch_response(watch: LiveWatch) -> Response<ResponseBody> {
    let stream = futures::stream::unfold(watch, LiveWatch::next_line);
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json")
        .body(StreamBody::new(stream).boxed_unsync())
        .expect("valid response")
}

// ----- discovery -----

/// Discovery's verbs of a resource: all of them, in alphabetical order.
const VERBS: [&str; 8] = {
    let mut names = [""; 8];
    let mut i = 0;
    while i < Verb::ALL.len() {
        names[i] = Verb::ALL[i].as_str();
        i += 1;
    }
    names
};
const STATUS_VERBS: [&str; 3] = [
    Verb::Get.as_str(),
    Verb::Patch.as_str(),
    Verb::Update.as_str(),
];

/// (group, versions in registration order)
fn groups(resources: &[FakeResource]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for r in resources {
        match out.iter_mut().find(|(g, _)| *g == r.group) {
            Some((_, versions)) => {
                if !versions.contains(&r.version) {
                    versions.push(r.version.clone());
                }
            }
            None => out.push((r.group.clone(), vec![r.version.clone()])),
        }
    }
    out
}

fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

fn api_resource_list(resources: &[FakeResource], group: &str, version: &str) -> Option<Value> {
    let mut list = Vec::new();
    for r in resources
        .iter()
        .filter(|r| r.group == group && r.version == version)
    {
        list.push(json!({
            "name": r.plural, "singularName": r.kind.to_lowercase(), "namespaced": r.namespaced,
            "kind": r.kind, "verbs": VERBS,
        }));
        if r.status_subresource {
            list.push(json!({
                "name": format!("{}/status", r.plural), "singularName": "", "namespaced": r.namespaced,
                "kind": r.kind, "verbs": STATUS_VERBS,
            }));
        }
    }
    (!list.is_empty()).then(|| {
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version(group, version), "resources": list})
    })
}

fn api_group(group: &str, versions: &[String]) -> Value {
    let versions: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": group_version(group, v), "version": v}))
        .collect();
    json!({"name": group, "versions": versions, "preferredVersion": versions[0]})
}

fn aggregated(resources: &[FakeResource], core: bool) -> Value {
    let items: Vec<Value> = groups(resources)
        .into_iter()
        .filter(|(g, _)| g.is_empty() == core)
        .map(|(g, versions)| {
            let versions: Vec<Value> = versions
                .iter()
                .map(|v| {
                    let rs: Vec<Value> = resources
                        .iter()
                        .filter(|r| r.group == g && r.version == *v)
                        .map(|r| {
                            let kind = json!({"group": r.group, "version": r.version, "kind": r.kind});
                            let subresources: Vec<Value> = if r.status_subresource {
                                vec![json!({"subresource": "status", "responseKind": kind, "verbs": STATUS_VERBS})]
                            } else {
                                vec![]
                            };
                            json!({
                                "resource": r.plural, "responseKind": kind,
                                "scope": if r.namespaced { "Namespaced" } else { "Cluster" },
                                "singularResource": r.kind.to_lowercase(), "verbs": VERBS,
                                "subresources": subresources,
                            })
                        })
                        .collect();
                    json!({"version": v, "resources": rs, "freshness": "Current"})
                })
                .collect();
            json!({"metadata": {"name": g}, "versions": versions})
        })
        .collect();
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items})
}

/// Legacy and aggregated discovery documents, and `/version`.
fn discovery(
    shared: &Shared,
    method: &Method,
    path: &str,
    accept: &str,
) -> Option<Response<ResponseBody>> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let is_discovery = matches!(
        segs.as_slice(),
        ["version"] | ["api"] | ["apis"] | ["api", _] | ["apis", _] | ["apis", _, _]
    );
    if !is_discovery {
        return None;
    }
    if *method != Method::GET {
        return Some(status_response(&errors::method_not_allowed()));
    }
    let store = shared.store.lock();
    let resources = &store.resources;
    let wants_aggregated = accept.contains("as=APIGroupDiscoveryList");
    let doc = match segs.as_slice() {
        ["version"] => Some(json!({
            "major": "1", "minor": "37", "gitVersion": "v1.37.0-fake", "gitCommit": "", "gitTreeState": "clean",
            "buildDate": "1970-01-01T00:00:00Z", "goVersion": "", "compiler": "fake", "platform": "fake/fake",
        })),
        ["api"] if wants_aggregated => Some(aggregated(resources, true)),
        ["apis"] if wants_aggregated => Some(aggregated(resources, false)),
        ["api"] => {
            let versions = groups(resources)
                .into_iter()
                .find(|(g, _)| g.is_empty())
                .map(|(_, v)| v)
                .unwrap_or_default();
            Some(json!({
                "kind": "APIVersions", "versions": versions,
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "fake"}],
            }))
        }
        ["apis"] => {
            let groups: Vec<Value> = groups(resources)
                .iter()
                .filter(|(g, _)| !g.is_empty())
                .map(|(g, v)| api_group(g, v))
                .collect();
            Some(json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}))
        }
        ["api", version] => api_resource_list(resources, "", version),
        ["apis", group] => groups(resources)
            .iter()
            .find(|(g, _)| g == group)
            .map(|(g, v)| {
                let mut doc = api_group(g, v);
                doc["kind"] = "APIGroup".into();
                doc["apiVersion"] = "v1".into();
                doc
            }),
        ["apis", group, version] => api_resource_list(resources, group, version),
        _ => None,
    };
    Some(match doc {
        Some(doc) => json_response(StatusCode::OK, &doc),
        None => status_response(&errors::resource_not_found()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        let t = parse_path("/api/v1/namespaces/ns/configmaps/x").unwrap();
        assert_eq!((t.group.as_str(), t.plural.as_str()), ("", "configmaps"));
        assert_eq!(t.namespace.as_deref(), Some("ns"));
        assert_eq!(t.name.as_deref(), Some("x"));
        let t = parse_path("/api/v1/namespaces/ns").unwrap();
        assert_eq!(
            (t.plural.as_str(), t.name.as_deref(), t.namespace),
            ("namespaces", Some("ns"), None)
        );
        let t = parse_path("/api/v1/namespaces/ns/status").unwrap();
        assert_eq!(
            (t.plural.as_str(), t.subresource.as_deref()),
            ("namespaces", Some("status"))
        );
        let t = parse_path("/apis/samplecontroller.k8s.io/v1alpha1/namespaces/d/foos/x/status")
            .unwrap();
        assert_eq!(t.group, "samplecontroller.k8s.io");
        assert_eq!(t.subresource.as_deref(), Some("status"));
        let t = parse_path("/apis/apps/v1/deployments").unwrap();
        assert_eq!((t.plural.as_str(), t.namespace), ("deployments", None));
        assert!(parse_path("/apis/apps/v1").is_none());
        assert!(parse_path("/healthz").is_none());
    }

    #[test]
    fn query_decoding() {
        let q = Query::parse("labelSelector=app%20in%20%28a%2Cb%29&watch=true&x=a+b&bad=%zz");
        assert_eq!(q.get("labelSelector"), Some("app in (a,b)"));
        assert!(q.flag("watch"));
        assert_eq!(q.get("x"), Some("a b"));
        assert_eq!(q.get("bad"), Some("%zz"));
    }

    #[test]
    fn continue_tokens_round_trip() {
        let key = ("ns".to_string(), "a/b\"c".to_string());
        assert_eq!(decode_continue(&encode_continue(&key)), Some(key));
        assert_eq!(decode_continue("zz"), None);
    }
}
