;;; lsp-mode.el --- Emacs's lsp-mode on `llmtool lsp', in batch mode  -*- lexical-binding: t -*-
;; The same visit as eglot.el, through the other Emacs client: registers `llmtool lsp' as an
;; lsp-mode client the way docs/editors.md says to (an add-on server for JSON), opens a tool
;; file, waits for its diagnostics in flymake, hovers a placeholder, formats the buffer and
;; renames a variable, saves, and writes what happened to $RESULT, one fact a line. Run by
;; scripts/lsp_clients.py with Debian's emacs-nox and elpa-lsp-mode.

(load (expand-file-name "harness.el" (file-name-directory load-file-name)))
(require 'lsp-mode)
(require 'flymake)

;; Only our server, no prompts (batch mode has no one to answer them), nothing written outside
;; the test's folder, and none of lsp-mode's extras that poll or watch files.
(setq lsp-session-file (expand-file-name "lsp-session" default-directory)
      lsp-enabled-clients '(llmtool)
      lsp-diagnostics-provider :flymake
      lsp-enable-file-watchers nil
      lsp-headerline-breadcrumb-enable nil
      lsp-modeline-code-actions-enable nil
      lsp-modeline-diagnostics-enable nil
      lsp-lens-enable nil
      lsp-enable-snippet nil
      lsp-restart 'ignore)

(lsp-register-client
 (make-lsp-client :new-connection (lsp-stdio-connection (list (getenv "LLMTOOL") "lsp"))
                  :activation-fn (lsp-activate-on "json")
                  :server-id 'llmtool
                  :add-on? t))

(condition-case problem
    (progn
      (lsp-workspace-folders-add (file-name-directory (getenv "TOOL_FILE")))
      (find-file (getenv "TOOL_FILE"))
      (js-mode)
      (lsp)
      (if (not (llmtool-wait (lambda () (flymake-diagnostics)) 20))
          (llmtool-note "no diagnostics")
        (llmtool-note "diagnostics %d" (length (flymake-diagnostics))))
      (goto-char (point-min))
      (search-forward "{{level")
      (let* ((hover (lsp-request "textDocument/hover" (lsp--text-document-position-params)))
             (contents (and hover (lsp:hover-contents hover))))
        (llmtool-note "hover %s" (if contents (replace-regexp-in-string
                                               "\n" " " (lsp--render-on-hover-content contents t))
                                   "none")))
      (lsp-format-buffer)
      (save-buffer)
      (llmtool-note "formatted")
      (goto-char (point-min))
      (search-forward "{{level")
      (lsp-rename "expertise")
      (save-buffer)
      (llmtool-note "renamed"))
  (error (llmtool-note "error %S" problem)))
(llmtool-finish)
