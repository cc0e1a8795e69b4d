// Package safetree is the one home of the rules that every tree from an
// untrusted place must pass: the layers of an image, an http archive, a
// git commit, a folder, and the tree that `unpack -o` writes to disk.
//
// The rules:
//
//   - a name is relative, has no ".." component and no NUL (CleanName);
//   - a path is at most Limits.MaxPathLength bytes and Limits.MaxDepth
//     components long, and no component is over MaxNameBytes
//     (Limits.CheckPath);
//   - a symbolic link's target is relative and not empty (CheckLinkText),
//     and, in the final tree, resolves inside the tree when every other
//     link on its way is followed too (CheckLinks, Resolve): a chain of
//     links that each look harmless cannot leave the tree; for a reader
//     that follows links through folders, nor is it a folder that holds
//     it (CheckWalkableLinks, CheckLink);
//   - no two names of one directory differ only in case or Unicode
//     normalization, for a tree written to a file system that may fold
//     them (CheckCase);
//   - the sizes and counts of Limits bound the work a tree can cause.
//
// Every refusal is an *Error whose Err is one of the class sentinels
// (ErrPathEscape, ErrLinkEscape, ErrLinkLoop, ErrUnsupportedType, ErrCaseCollision,
// ErrBadName), each of which also matches ErrUnsafe with errors.Is; a
// crossed limit is a *LimitError, which matches ErrLimit and names the
// limit (Which, a LimitID). Sanitize is how untrusted text (an entry
// name, a URL from a hostile server) is printed: on one line, bounded,
// no terminal escapes. The package imports only the standard library and
// golang.org/x/text, so any reader can use it.
package safetree
