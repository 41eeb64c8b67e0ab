#compdef parley
# zsh completion for parley. Load it with
#   source <(parley completion zsh)
# in ~/.zshrc after compinit, or save it as _parley in a directory of
# $fpath. The candidates come from `parley __complete`, which reads the
# workspace of the current directory (or of the line's -C).

_parley() {
    local -a described plain
    local out line files=
    out=$(${words[1]} __complete "${(@)words[2,CURRENT]}" 2>/dev/null) || return 1
    for line in "${(@f)out}"; do
        case $line in
        :files) files=f ;;
        :dirs) files=d ;;
        '') ;;
        *$'\t'*) described+=("${${line%%$'\t'*}//:/\\:}:${line#*$'\t'}") ;;
        *) plain+=("$line") ;;
        esac
    done
    local ret=1
    (( ${#described} )) && _describe -t values parley described && ret=0
    (( ${#plain} )) && compadd -Q -- "${plain[@]}" && ret=0
    case $files in
    f) _files && ret=0 ;;
    d) _files -/ && ret=0 ;;
    esac
    return ret
}

if [[ $funcstack[1] == _parley ]]; then
    _parley "$@"
else
    compdef _parley parley
fi
