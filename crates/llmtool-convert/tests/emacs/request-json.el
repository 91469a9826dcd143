;;; request-json.el --- Tool forms turned into request JSON as gptel and llm.el do it  -*- lexical-binding: t; -*-

;; The tests evaluate llmtool's elisp output in `emacs --batch' against these stand-ins for
;; `gptel-make-tool' and `llm-make-tool'.  Each stand-in builds the JSON function spec the way
;; its package builds the `tools' entry of a request:
;;
;; gptel: every `:type' symbol becomes its name; each argument plist, without `:name' and
;; `:optional', is the schema of the property named by `:name'; arguments without
;; `:optional t' are listed in `required'; an `object' argument gets `required' (empty unless
;; given) and `additionalProperties' false, and so do the parameters themselves.
;;
;; llm.el: each argument's schema keeps only its type, description, enum, items and
;; properties, with symbols made strings, nil made null and false made `:false'; `required' is
;; left out when no argument is required.
;;
;; Arrays stay vectors throughout, so a list where a vector belongs fails in `json-serialize',
;; as it does in both packages.
;;
;; Usage: emacs --batch -Q -l request-json.el -f llmtool-print-requests FILE.el...
;; prints one line of JSON per file: {"file": ..., "function": {...}} or {"file": ..., "error": ...}.

(require 'cl-lib)
(require 'json)

(defun llmtool--type-names (spec)
  "SPEC with each `:type' symbol replaced by its name, at any depth."
  (cond
   ((vectorp spec) (vconcat (mapcar #'llmtool--type-names spec)))
   ((and (consp spec) (keywordp (car spec)))
    (let (out)
      (while spec
        (let ((key (pop spec)) (value (pop spec)))
          (push key out)
          (push (if (and (eq key :type) value (symbolp value))
                    (symbol-name value)
                  (llmtool--type-names value))
                out)))
      (nreverse out)))
   ((consp spec) (mapcar #'llmtool--type-names spec))
   (t spec)))

(defun llmtool--plist-without (plist keys)
  "PLIST less the entries whose key is in KEYS."
  (let (out)
    (while plist
      (let ((key (pop plist)) (value (pop plist)))
        (unless (memq key keys)
          (setq out (append out (list key value))))))
    out))

(defun llmtool--property-key (name)
  "The plist key for the property NAME."
  (intern (concat ":" name)))

(cl-defun gptel-make-tool (&key name description args function async category confirm include)
  "Stand-in for gptel's constructor: the request's function spec for the tool, as JSON."
  (ignore function async category confirm include)
  (let* ((args (llmtool--type-names (copy-tree args t)))
         (properties
          (cl-loop for arg in args
                   for schema = (llmtool--plist-without arg '(:name :optional))
                   when (equal (plist-get schema :type) "object")
                   do (setq schema (append schema
                                           (unless (plist-member schema :required)
                                             (list :required []))
                                           (list :additionalProperties :json-false)))
                   append (list (llmtool--property-key (plist-get arg :name)) schema)))
         (required (vconcat (cl-loop for arg in args
                                     unless (plist-get arg :optional)
                                     collect (plist-get arg :name)))))
    (json-serialize
     (list :name name
           :description description
           :parameters (if args
                           (list :type "object" :properties properties
                                 :required required :additionalProperties :json-false)
                         (list :type "object" :properties nil)))
     :null-object :null :false-object :json-false)))

(defun llmtool--serializable (plist)
  "PLIST's values made JSON-ready the way llm.el does it, nested plists included."
  (let (out)
    (while plist
      (let ((key (pop plist)) (value (pop plist)))
        (setq out
              (append out
                      (list key
                            (cond ((memq value '(:json-false :false)) :false)
                                  ((eq value t) t)
                                  ((null value) :null)
                                  ((symbolp value) (symbol-name value))
                                  ((consp value) (llmtool--serializable value))
                                  (t value)))))))
    out))

(cl-defun llm-make-tool (&key name description args function async)
  "Stand-in for llm.el's constructor: the request's function spec for the tool, as JSON."
  (ignore function async)
  (let (properties required)
    (dolist (arg args)
      (let ((schema (list :type (symbol-name (plist-get arg :type)))))
        (dolist (key '(:description :enum))
          (when (plist-get arg key)
            (setq schema (append schema (list key (plist-get arg key))))))
        (when (plist-get arg :items)
          (setq schema (append schema (list :items (llmtool--serializable (plist-get arg :items))))))
        (when (plist-get arg :properties)
          (setq schema (append schema
                               (list :properties (llmtool--serializable (plist-get arg :properties))))))
        (unless (plist-get arg :optional)
          (push (plist-get arg :name) required))
        (setq properties (append properties
                                 (list (llmtool--property-key (plist-get arg :name)) schema)))))
    (json-serialize
     (list :name name
           :description description
           :parameters (append (list :type "object" :properties properties)
                               (when required
                                 (list :required (vconcat (nreverse required)))))))))

(defun llmtool--evaluate-file (file)
  "Evaluate every form in FILE (read as UTF-8); the value of the last one."
  (with-temp-buffer
    (let ((coding-system-for-read 'utf-8))
      (insert-file-contents file))
    (goto-char (point-min))
    (let (value)
      (condition-case nil
          (while t
            (setq value (eval (read (current-buffer)) t)))
        (end-of-file value)))))

(defun llmtool-print-requests ()
  "Print the request JSON of the tool in each file named on the command line."
  (dolist (file command-line-args-left)
    (let ((line
           (condition-case problem
               (format "{\"file\":%s,\"function\":%s}"
                       (json-encode-string file) (llmtool--evaluate-file file))
             (error (format "{\"file\":%s,\"error\":%s}"
                            (json-encode-string file)
                            (json-encode-string (format "%S" problem)))))))
      (princ line)
      (terpri)))
  (setq command-line-args-left nil))

;;; request-json.el ends here
