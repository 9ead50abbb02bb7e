//! A recursive-descent parser for cel-go's grammar (`CEL.g4`), building cel-rust's AST with
//! the ids, macro expansions and `&&`/`||` trees cel-rust's ANTLR-based parser builds, and
//! cel-go's answers where the two differ (see the module docs).

use super::ast::{
    CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedEntryExpr, IdedExpr, ListExpr, LiteralValue,
    MapEntryExpr, MapExpr, SelectExpr, StructExpr, StructFieldExpr, operators,
};

use super::lexer::{Kind, Token};
use super::{MAX_DEPTH, SyntaxError};

/// An expression and the depth of its tree (cel-go's recursion limit counts nesting).
struct P {
    e: IdedExpr,
    depth: usize,
}

pub(super) struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token>,
    pos: usize,
    next_id: u64,
    optional: bool,
    /// Open `expr` rules (parentheses, brackets, arguments): bounds the parser's own stack.
    open: usize,
}

type R<T> = Result<T, SyntaxError>;

/// The tokens an expression can start with, as ANTLR lists them.
const EXPR_START: &str = "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

impl<'a> Parser<'a> {
    pub(super) fn new(src: &'a str, toks: Vec<Token>, optional: bool) -> Self {
        Parser {
            src,
            toks,
            pos: 0,
            next_id: 1,
            optional,
            open: 0,
        }
    }

    pub(super) fn parse(mut self) -> R<IdedExpr> {
        let p = self.expr()?;
        let t = self.peek();
        if t.kind != Kind::Eof {
            return Err(self.error_at(
                t,
                format!("extraneous input {} expecting <EOF>", self.quote(t)),
            ));
        }
        Ok(p.e)
    }

    // ---- tokens ----------------------------------------------------------------------

    fn peek(&self) -> Token {
        self.toks[self.pos]
    }

    fn peek_at(&self, k: usize) -> Kind {
        self.toks.get(self.pos + k).map_or(Kind::Eof, |t| t.kind)
    }

    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos];
        if t.kind != Kind::Eof {
            self.pos += 1;
        }
        t
    }

    fn eat(&mut self, kind: Kind) -> bool {
        if self.peek().kind == kind {
            self.bump();
            true
        } else {
            false
        }
    }

    /// Reads the `?` that makes a selection, index, list element, map entry or message
    /// field optional, if one is next; `syntax` names the construct in the error cel-go gives
    /// when the optional syntax is off.
    fn optional_marker(&mut self, syntax: &str) -> Result<bool, SyntaxError> {
        if self.peek().kind != Kind::Question {
            return Ok(false);
        }
        let q = self.bump();
        if !self.optional {
            return Err(self.error_at(q, format!("unsupported syntax {syntax}")));
        }
        Ok(true)
    }

    fn text(&self, t: Token) -> &'a str {
        &self.src[t.start..t.end]
    }

    fn quote(&self, t: Token) -> String {
        if t.kind == Kind::Eof {
            "'<EOF>'".to_owned()
        } else {
            format!("'{}'", self.text(t))
        }
    }

    fn error_at(&self, t: Token, message: String) -> SyntaxError {
        SyntaxError {
            message,
            line: t.line,
            column: t.column + 1,
        }
    }

    /// The closing token `kind` (`)`, `]`, `}` or `:`); at the end of the input, ANTLR's
    /// "missing ')' at '<EOF>'" (it would insert the token), else "mismatched input".
    fn expect(&mut self, kind: Kind, expecting: &str) -> R<Token> {
        let t = self.peek();
        if t.kind == kind {
            return Ok(self.bump());
        }
        if t.kind == Kind::Eof {
            let missing = match kind {
                Kind::RParen => "')'",
                Kind::RBracket => "']'",
                Kind::RBrace => "'}'",
                _ => "':'",
            };
            return Err(self.error_at(t, format!("missing {missing} at '<EOF>'")));
        }
        Err(self.mismatched(t, expecting))
    }

    fn mismatched(&self, t: Token, expecting: &str) -> SyntaxError {
        let message = if t.kind == Kind::Eof
            || matches!(
                t.kind,
                Kind::RParen | Kind::RBracket | Kind::RBrace | Kind::Comma | Kind::Colon
            ) {
            format!("mismatched input {} expecting {expecting}", self.quote(t))
        } else {
            format!("extraneous input {} expecting {expecting}", self.quote(t))
        };
        self.error_at(t, message)
    }

    fn id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    fn node(&mut self, expr: Expr) -> IdedExpr {
        IdedExpr {
            id: self.id(),
            expr,
        }
    }

    fn check_depth(&self, t: Token, depth: usize) -> R<()> {
        if depth > MAX_DEPTH {
            return Err(self.error_at(
                t,
                format!("expression recursion limit exceeded: {MAX_DEPTH}"),
            ));
        }
        Ok(())
    }

    // ---- rules -----------------------------------------------------------------------

    /// `expr: conditionalOr ('?' conditionalOr ':' expr)?`
    fn expr(&mut self) -> R<P> {
        let start = self.peek();
        self.open += 1;
        // Each open rule costs a few stack frames; nesting deeper than the limit is an
        // error anyway, so stop before the stack does.
        if self.open > MAX_DEPTH {
            return Err(self.error_at(
                start,
                format!("expression recursion limit exceeded: {MAX_DEPTH}"),
            ));
        }
        let cond = self.conditional_or()?;
        let out = if self.peek().kind == Kind::Question {
            let q = self.bump();
            let op = self.id();
            let t = self.conditional_or()?;
            self.expect(Kind::Colon, "':'")?;
            let f = self.expr()?;
            let depth = 1 + cond.depth.max(t.depth).max(f.depth);
            self.check_depth(q, depth)?;
            P {
                e: call(op, operators::CONDITIONAL, None, vec![cond.e, t.e, f.e]),
                depth,
            }
        } else {
            cond
        };
        self.open -= 1;
        Ok(out)
    }

    fn conditional_or(&mut self) -> R<P> {
        self.logic(Kind::Or, operators::LOGICAL_OR)
    }

    /// `conditionalOr: conditionalAnd ('||' conditionalAnd)*` (and `&&` over `relation`):
    /// cel-rust's balanced tree, each operator's id taken after its right-hand term.
    fn logic(&mut self, op: Kind, func: &str) -> R<P> {
        let first = if op == Kind::Or {
            self.logic(Kind::And, operators::LOGICAL_AND)?
        } else {
            self.relation()?
        };
        if self.peek().kind != op {
            return Ok(first);
        }
        let mut depth = first.depth;
        let mut terms = vec![first.e];
        let mut ops = vec![];
        while self.peek().kind == op {
            self.bump();
            let next = if op == Kind::Or {
                self.logic(Kind::And, operators::LOGICAL_AND)?
            } else {
                self.relation()?
            };
            depth = depth.max(next.depth);
            terms.push(next.e);
            ops.push(self.id());
        }
        // A balanced tree of n terms is ceil(log2 n) deep.
        let levels = usize::BITS - (terms.len() - 1).leading_zeros();
        let mut terms: Vec<Option<IdedExpr>> = terms.into_iter().map(Some).collect();
        let e = balanced(func, &mut terms, &ops, 0, ops.len() - 1);
        Ok(P {
            e,
            depth: depth + levels as usize,
        })
    }

    /// `relation: calc | relation ('<'|'<='|'>='|'>'|'=='|'!='|'in') relation`
    fn relation(&mut self) -> R<P> {
        let mut lhs = self.calc(0)?;
        loop {
            let t = self.peek();
            let func = match t.kind {
                Kind::Lt => operators::LESS,
                Kind::Le => operators::LESS_EQUALS,
                Kind::Ge => operators::GREATER_EQUALS,
                Kind::Gt => operators::GREATER,
                Kind::Eq => operators::EQUALS,
                Kind::Ne => operators::NOT_EQUALS,
                Kind::In => operators::IN,
                _ => return Ok(lhs),
            };
            self.bump();
            let op = self.id();
            let rhs = self.calc(0)?;
            let depth = 1 + lhs.depth.max(rhs.depth);
            self.check_depth(t, depth)?;
            lhs = P {
                e: call(op, func, None, vec![lhs.e, rhs.e]),
                depth,
            };
        }
    }

    /// `calc: unary | calc ('*'|'/'|'%') calc | calc ('+'|'-') calc`, by precedence
    /// climbing: both levels left-associative.
    fn calc(&mut self, min: u8) -> R<P> {
        let mut lhs = self.unary()?;
        loop {
            let t = self.peek();
            let (func, prec) = match t.kind {
                Kind::Star => (operators::MULTIPLY, 2),
                Kind::Slash => (operators::DIVIDE, 2),
                Kind::Percent => (operators::MODULO, 2),
                Kind::Plus => (operators::ADD, 1),
                Kind::Minus => (operators::SUBSTRACT, 1),
                _ => return Ok(lhs),
            };
            if prec < min {
                return Ok(lhs);
            }
            self.bump();
            let op = self.id();
            let rhs = self.calc(prec + 1)?;
            let depth = 1 + lhs.depth.max(rhs.depth);
            self.check_depth(t, depth)?;
            lhs = P {
                e: call(op, func, None, vec![lhs.e, rhs.e]),
                depth,
            };
        }
    }

    /// `unary: member | '!'+ member | '-'+ member`. A run of one operator applies it once
    /// when odd and not at all when even (cel-go; cel-rust applies it once for any run).
    /// A single `-` before a number is the literal's sign (ANTLR prefers `member`'s
    /// `literal: '-'? NUM_INT` alternative); before `-1u` or anything else it negates.
    fn unary(&mut self) -> R<P> {
        let t = self.peek();
        let (func, kind) = match t.kind {
            Kind::Bang => (operators::LOGICAL_NOT, Kind::Bang),
            Kind::Minus => (operators::NEGATE, Kind::Minus),
            _ => return self.member(),
        };
        let mut n = 0;
        while self.peek_at(n) == kind {
            n += 1;
        }
        if kind == Kind::Minus && n == 1 && matches!(self.peek_at(1), Kind::Int | Kind::Float) {
            return self.member();
        }
        for _ in 0..n {
            self.bump();
        }
        if n % 2 == 0 {
            return self.member();
        }
        let op = self.id();
        let m = self.member()?;
        let depth = 1 + m.depth;
        self.check_depth(t, depth)?;
        Ok(P {
            e: call(op, func, None, vec![m.e]),
            depth,
        })
    }

    /// `member: primary | member '.' '?'? escapeIdent | member '.' IDENTIFIER '(' args ')'
    /// | member '[' '?'? expr ']'`
    fn member(&mut self) -> R<P> {
        let mut m = self.primary()?;
        loop {
            let t = self.peek();
            m = match t.kind {
                Kind::Dot => self.select(m, t)?,
                Kind::LBracket => self.index(m, t)?,
                _ => return Ok(m),
            };
        }
    }

    /// After `member`: `'.' '?'? escapeIdent` or `'.' IDENTIFIER '(' args ')'`. Apart from
    /// `member` so that the recursion's frames stay small (debug builds, 2 MiB threads).
    fn select(&mut self, m: P, t: Token) -> R<P> {
        self.bump();
        let opt = self.optional_marker("'.?'")?;
        let name = self.peek();
        let field = match name.kind {
            Kind::Ident => self.text(name).to_owned(),
            Kind::EscIdent => {
                let s = self.text(name);
                s[1..s.len() - 1].to_owned()
            }
            _ => return Err(self.mismatched(name, "{IDENTIFIER, ESC_IDENTIFIER}")),
        };
        self.bump();
        if !opt && name.kind == Kind::Ident && self.peek().kind == Kind::LParen {
            self.bump();
            let op = self.id();
            let first = self.peek();
            let (args, depth) = self.args()?;
            let depth = 1 + m.depth.max(depth);
            self.check_depth(t, depth)?;
            let e = self.call_or_macro(op, field, Some(m.e), args, first)?;
            return Ok(P { e, depth });
        }
        let depth = 1 + m.depth;
        self.check_depth(t, depth)?;
        let e = if opt {
            let lit = self.node(Expr::Literal(LiteralValue::String(field.into())));
            let op = self.id();
            call(op, operators::OPT_SELECT, None, vec![m.e, lit])
        } else {
            self.node(Expr::Select(SelectExpr {
                operand: Box::new(m.e),
                field,
                test: false,
            }))
        };
        Ok(P { e, depth })
    }

    /// After `member`: `'[' '?'? expr ']'`.
    fn index(&mut self, m: P, t: Token) -> R<P> {
        self.bump();
        let op = self.id();
        let opt = self.optional_marker("'[?'")?;
        let index = self.expr()?;
        self.expect(Kind::RBracket, "']'")?;
        let depth = 1 + m.depth.max(index.depth);
        self.check_depth(t, depth)?;
        let func = if opt {
            operators::OPT_INDEX
        } else {
            operators::INDEX
        };
        Ok(P {
            e: call(op, func, None, vec![m.e, index.e]),
            depth,
        })
    }

    /// Call arguments after `(`, through `)`: `exprList?` (no trailing comma).
    fn args(&mut self) -> R<(Vec<IdedExpr>, usize)> {
        let mut args = vec![];
        let mut depth = 0;
        if self.eat(Kind::RParen) {
            return Ok((args, depth));
        }
        loop {
            let a = self.expr()?;
            depth = depth.max(a.depth);
            args.push(a.e);
            if self.eat(Kind::Comma) {
                continue;
            }
            self.expect(Kind::RParen, "{')', ','}")?;
            return Ok((args, depth));
        }
    }

    /// `primary`, each alternative in a function of its own: this one is on the recursion's
    /// path (`(`, `[`, `{` and arguments nest), and a debug build's frame holds the locals
    /// of every arm.
    fn primary(&mut self) -> R<P> {
        let t = self.peek();
        match t.kind {
            Kind::Dot | Kind::Ident => self.ident(t),
            Kind::LParen => {
                self.bump();
                let e = self.expr()?;
                self.expect(Kind::RParen, "')'")?;
                Ok(e)
            }
            Kind::LBracket => self.list(t),
            Kind::LBrace => self.map(t),
            Kind::Minus => {
                // Only for a signed number (see `unary`).
                self.bump();
                let n = self.bump();
                self.number(n, true)
            }
            Kind::Int | Kind::Float | Kind::Uint => {
                self.bump();
                self.number(t, false)
            }
            Kind::String | Kind::Bytes => self.string(t),
            Kind::True | Kind::False | Kind::Null => {
                self.bump();
                let lit = match t.kind {
                    Kind::True => LiteralValue::Boolean(true),
                    Kind::False => LiteralValue::Boolean(false),
                    _ => LiteralValue::Null,
                };
                Ok(P {
                    e: self.node(Expr::Literal(lit)),
                    depth: 1,
                })
            }
            _ => Err(self.mismatched(t, EXPR_START)),
        }
    }

    /// `'.'? IDENTIFIER`, a global call, or a message literal.
    fn ident(&mut self, t: Token) -> R<P> {
        let leading = t.kind == Kind::Dot;
        if leading {
            self.bump();
        }
        let name = self.peek();
        if name.kind != Kind::Ident {
            return Err(self.mismatched(name, "IDENTIFIER"));
        }
        if self.is_message() {
            return self.message(leading);
        }
        self.bump();
        let text = self.text(name);
        // cel-go's reserved identifiers (`true`, `false`, `null` and `in` are tokens of
        // their own, so never reach here).
        if crate::cel::RESERVED.contains(&text) {
            return Err(self.error_at(name, format!("reserved identifier: {text}")));
        }
        let text = if leading {
            format!(".{text}")
        } else {
            text.to_owned()
        };
        if self.eat(Kind::LParen) {
            let op = self.id();
            let first = self.peek();
            let (args, depth) = self.args()?;
            let e = self.call_or_macro(op, text, None, args, first)?;
            return Ok(P {
                e,
                depth: depth + 1,
            });
        }
        Ok(P {
            e: self.node(Expr::Ident(text)),
            depth: 1,
        })
    }

    /// `'[' listInit? ','? ']'`
    fn list(&mut self, t: Token) -> R<P> {
        self.bump();
        let id = self.id();
        let mut elements = vec![];
        let mut optionals = vec![];
        let mut depth = 0;
        while self.peek().kind != Kind::RBracket {
            if self.optional_marker("'?'")? {
                optionals.push(elements.len());
            }
            let e = self.expr()?;
            depth = depth.max(e.depth);
            elements.push(e.e);
            if !self.eat(Kind::Comma) {
                break;
            }
        }
        self.expect(Kind::RBracket, "{']', ','}")?;
        self.check_depth(t, depth + 1)?;
        Ok(P {
            e: IdedExpr {
                id,
                expr: Expr::List(ListExpr::new_with_optionals(elements, optionals)),
            },
            depth: depth + 1,
        })
    }

    /// `'{' mapInitializerList? ','? '}'`
    fn map(&mut self, t: Token) -> R<P> {
        self.bump();
        let id = self.id();
        let mut entries = vec![];
        let mut depth = 0;
        while self.peek().kind != Kind::RBrace {
            let entry = self.id();
            let optional = self.optional_marker("'?'")?;
            let key = self.expr()?;
            self.expect(Kind::Colon, "':'")?;
            let value = self.expr()?;
            depth = depth.max(key.depth).max(value.depth);
            entries.push(IdedEntryExpr {
                id: entry,
                expr: EntryExpr::MapEntry(MapEntryExpr {
                    key: key.e,
                    value: value.e,
                    optional,
                }),
            });
            if !self.eat(Kind::Comma) {
                break;
            }
        }
        self.expect(Kind::RBrace, "{'}', ','}")?;
        self.check_depth(t, depth + 1)?;
        Ok(P {
            e: IdedExpr {
                id,
                expr: Expr::Map(MapExpr { entries }),
            },
            depth: depth + 1,
        })
    }

    fn string(&mut self, t: Token) -> R<P> {
        self.bump();
        let lit = super::literal::decode(self.text(t), t.kind == Kind::Bytes)
            .map_err(|m| self.error_at(t, m))?;
        Ok(P {
            e: self.node(Expr::Literal(lit)),
            depth: 1,
        })
    }

    /// Whether the tokens ahead are `IDENTIFIER ('.' IDENTIFIER)* '{'`: a message literal.
    fn is_message(&self) -> bool {
        let mut k = 0;
        loop {
            if self.peek_at(k) != Kind::Ident {
                return false;
            }
            match self.peek_at(k + 1) {
                Kind::Dot => k += 2,
                Kind::LBrace => return true,
                _ => return false,
            }
        }
    }

    /// `'.'? IDENTIFIER ('.' IDENTIFIER)* '{' fieldInitializerList? ','? '}'`
    fn message(&mut self, leading: bool) -> R<P> {
        let mut type_name = String::new();
        if leading {
            type_name.push('.');
        }
        loop {
            let t = self.bump();
            type_name.push_str(self.text(t));
            if self.eat(Kind::Dot) {
                type_name.push('.');
                continue;
            }
            break;
        }
        let brace = self.bump();
        let id = self.id();
        let mut entries = vec![];
        let mut depth = 0;
        while self.peek().kind != Kind::RBrace {
            let optional = self.optional_marker("'?'")?;
            let f = self.peek();
            let field = match f.kind {
                Kind::Ident => self.text(f).to_owned(),
                Kind::EscIdent => {
                    let s = self.text(f);
                    s[1..s.len() - 1].to_owned()
                }
                _ => return Err(self.mismatched(f, "{IDENTIFIER, ESC_IDENTIFIER}")),
            };
            self.bump();
            self.expect(Kind::Colon, "':'")?;
            let entry = self.id();
            let value = self.expr()?;
            depth = depth.max(value.depth);
            entries.push(IdedEntryExpr {
                id: entry,
                expr: EntryExpr::StructField(StructFieldExpr {
                    field,
                    value: value.e,
                    optional,
                }),
            });
            if !self.eat(Kind::Comma) {
                break;
            }
        }
        self.expect(Kind::RBrace, "{'}', ','}")?;
        self.check_depth(brace, depth + 1)?;
        Ok(P {
            e: IdedExpr {
                id,
                expr: Expr::Struct(StructExpr { type_name, entries }),
            },
            depth: depth + 1,
        })
    }

    fn number(&mut self, t: Token, negative: bool) -> R<P> {
        let text = self.text(t);
        let lit = match t.kind {
            Kind::Int => {
                let (digits, radix) = match text.strip_prefix("0x") {
                    Some(hex) => (hex, 16),
                    None => (text, 10),
                };
                let signed = if negative {
                    format!("-{digits}")
                } else {
                    digits.to_owned()
                };
                let v = i64::from_str_radix(&signed, radix)
                    .map_err(|_| self.error_at(t, "invalid int literal".to_owned()))?;
                LiteralValue::Int(v)
            }
            Kind::Uint => {
                let text = &text[..text.len() - 1];
                let (digits, radix) = match text.strip_prefix("0x") {
                    Some(hex) => (hex, 16),
                    None => (text, 10),
                };
                let v = u64::from_str_radix(digits, radix)
                    .map_err(|_| self.error_at(t, "invalid uint literal".to_owned()))?;
                LiteralValue::UInt(v)
            }
            _ => {
                let v: f64 = text
                    .parse()
                    .ok()
                    .filter(|v: &f64| v.is_finite())
                    .ok_or_else(|| self.error_at(t, "invalid double literal".to_owned()))?;
                LiteralValue::Double(if negative { -v } else { v })
            }
        };
        Ok(P {
            e: self.node(Expr::Literal(lit)),
            depth: 1,
        })
    }

    /// A call, or the macro it names (cel-rust's set and expansions, with its ids); `at` is
    /// the first argument's first token, where a macro's error is.
    fn call_or_macro(
        &mut self,
        id: u64,
        func: String,
        target: Option<IdedExpr>,
        mut args: Vec<IdedExpr>,
        at: Token,
    ) -> R<IdedExpr> {
        let n = args.len();
        let macro_name = match (func.as_str(), target.is_some()) {
            (operators::HAS, false) if n == 1 => Some("has"),
            (operators::EXISTS, true) if n == 2 => Some("exists"),
            (operators::ALL, true) if n == 2 => Some("all"),
            (operators::EXISTS_ONE | "existsOne", true) if n == 2 => Some("exists_one"),
            (operators::MAP, true) if n == 2 || n == 3 => Some("map"),
            (operators::FILTER, true) if n == 2 => Some("filter"),
            _ => None,
        };
        let Some(name) = macro_name else {
            return Ok(call(id, &func, target, args));
        };
        if name == "has" {
            let arg = args.remove(0);
            return match arg.expr {
                Expr::Select(mut s) => {
                    s.test = true;
                    Ok(self.node(Expr::Select(s)))
                }
                _ => Err(self.error_at(at, "invalid argument to has() macro".to_owned())),
            };
        }
        let range = target.expect("receiver macros have a target");
        let result = "@result".to_owned();
        let var_expr = args.remove(0);
        let Expr::Ident(var) = var_expr.expr.clone() else {
            return Err(self.error_at(at, "argument must be a simple name".to_owned()));
        };
        let accu = |p: &mut Self| p.node(Expr::Ident(result.clone()));
        let lit_bool = |p: &mut Self, b: bool| p.node(Expr::Literal(LiteralValue::Boolean(b)));
        let lit_int = |p: &mut Self, i: i64| p.node(Expr::Literal(LiteralValue::Int(i)));
        let mk = |p: &mut Self, func: &str, args: Vec<IdedExpr>| {
            let id = p.id();
            call(id, func, None, args)
        };
        let (init, cond, step, res) = match name {
            "exists" | "all" => {
                let pred = args.pop().expect("two arguments");
                let exists = name == "exists";
                let init = lit_bool(self, !exists);
                let a = accu(self);
                let cond = if exists {
                    let not = mk(self, operators::LOGICAL_NOT, vec![a]);
                    mk(self, operators::NOT_STRICTLY_FALSE, vec![not])
                } else {
                    mk(self, operators::NOT_STRICTLY_FALSE, vec![a])
                };
                let a = accu(self);
                let op = if exists {
                    operators::LOGICAL_OR
                } else {
                    operators::LOGICAL_AND
                };
                let step = mk(self, op, vec![a, pred]);
                let res = accu(self);
                (init, cond, step, res)
            }
            "exists_one" => {
                let pred = args.pop().expect("two arguments");
                let init = lit_int(self, 0);
                let cond = lit_bool(self, true);
                let a = accu(self);
                let one = lit_int(self, 1);
                let plus = mk(self, operators::ADD, vec![a, one]);
                let a = accu(self);
                let step = mk(self, operators::CONDITIONAL, vec![pred, plus, a]);
                let a = accu(self);
                let one = lit_int(self, 1);
                let res = mk(self, operators::EQUALS, vec![a, one]);
                (init, cond, step, res)
            }
            "map" => {
                let func_expr = args.pop().expect("a transform");
                let filter = args.pop();
                let init = self.node(Expr::List(ListExpr::new(vec![])));
                let cond = lit_bool(self, true);
                let a = accu(self);
                let l = self.node(Expr::List(ListExpr::new(vec![func_expr])));
                let mut step = mk(self, operators::ADD, vec![a, l]);
                if let Some(filter) = filter {
                    let a = accu(self);
                    step = mk(self, operators::CONDITIONAL, vec![filter, step, a]);
                }
                let res = accu(self);
                (init, cond, step, res)
            }
            _ => {
                // filter
                let pred = args.pop().expect("two arguments");
                let init = self.node(Expr::List(ListExpr::new(vec![])));
                let cond = lit_bool(self, true);
                let a = accu(self);
                let l = self.node(Expr::List(ListExpr::new(vec![var_expr])));
                let step = mk(self, operators::ADD, vec![a, l]);
                let a = accu(self);
                let step = mk(self, operators::CONDITIONAL, vec![pred, step, a]);
                let res = accu(self);
                (init, cond, step, res)
            }
        };
        Ok(self.node(Expr::Comprehension(Box::new(ComprehensionExpr {
            iter_range: range,
            iter_var: var,
            iter_var2: None,
            accu_var: result,
            accu_init: init,
            loop_cond: cond,
            loop_step: step,
            result: res,
        }))))
    }
}

fn call(id: u64, func: &str, target: Option<IdedExpr>, args: Vec<IdedExpr>) -> IdedExpr {
    IdedExpr {
        id,
        expr: Expr::Call(CallExpr {
            func_name: func.to_owned(),
            target: target.map(Box::new),
            args,
        }),
    }
}

/// cel-rust's `LogicManager::balanced_tree`: terms `lo..=hi+1` joined by `ops[lo..=hi]`.
fn balanced(
    func: &str,
    terms: &mut [Option<IdedExpr>],
    ops: &[u64],
    lo: usize,
    hi: usize,
) -> IdedExpr {
    let mid = (lo + hi).div_ceil(2);
    let left = if mid == lo {
        terms[mid].take().expect("each term once")
    } else {
        balanced(func, terms, ops, lo, mid - 1)
    };
    let right = if mid == hi {
        terms[mid + 1].take().expect("each term once")
    } else {
        balanced(func, terms, ops, mid + 1, hi)
    };
    call(ops[mid], func, None, vec![left, right])
}
