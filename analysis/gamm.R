# The R side of analysis/mgcv.py: mgcv's GAMMs (Tominaga et al.'s Table S2 and Figure 3)
# and ordinal's cumulative link mixed models, files in and JSON out.
#
# usage: Rscript gamm.R JOB.json DATA.csv OUT.json
#
# JOB.json: {"kind": "gamm" | "clmm", ...}
#   gamm: {"models": [{"name", "outcome", "distance"}], "method", "k", "grid": [numbers]}
#     per model, with uid the participant as a factor (the reference study's Eq. 4 as
#     mgcv fits it: a random intercept and a random slope on the distance per participant):
#       y ~ s(x, k = k) + s(uid, bs = "re") + s(uid, x, bs = "re")
#     k is lowered to the number of distinct distances when there are fewer.
#     method REML: the REML smoothing parameters are located by bam's fast REML (fREML: the
#     same criterion, maximized on the QR-reduced problem), then gam fits at them; gam's own
#     REML search reaches the same optimum but forms the exact Hessian of the score on the full
#     n x (k + 2P) problem at every Newton step (docs/analysis-mgcv.md times both). GCV.Cp
#     and ML: gam's own search.
#   clmm: {"outcome", "columns": [fixed-effect columns], "slope": column or null}
#       ordered(y) ~ columns + (1 + slope | uid)      (logit link, flexible thresholds)
# DATA.csv: uid plus every column the job names.
# OUT.json: gamm {"r_version", "mgcv_version", "models": [...]}; clmm {"coefficients",
#   "thresholds", "logLik", ...}; numbers as R computes them (NA -> null).

suppressPackageStartupMessages({
  library(jsonlite)
})

args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 3) stop("usage: Rscript gamm.R JOB.json DATA.csv OUT.json")
job <- fromJSON(args[[1]], simplifyVector = TRUE)
frame <- read.csv(args[[2]], stringsAsFactors = FALSE)
frame$uid <- factor(frame$uid)

row_of <- function(table, name) {
  if (!(name %in% rownames(table))) stop(sprintf("mgcv's summary has no term %s", name))
  table[name, ]
}

smooth_row <- function(table, name) {
  r <- row_of(table, name)
  list(edf = unname(r[["edf"]]), ref_df = unname(r[["Ref.df"]]), F = unname(r[["F"]]),
       p = unname(r[["p-value"]]))
}

fit_gamm <- function(spec) {
  started <- proc.time()[["elapsed"]]
  data <- data.frame(y = frame[[spec$outcome]], x = frame[[spec$distance]], uid = frame$uid)
  data <- data[is.finite(data$y) & is.finite(data$x), ]
  data$uid <- droplevels(data$uid)
  k <- min(job$k, length(unique(data$x)))
  formula <- y ~ s(x, k = k) + s(uid, bs = "re") + s(uid, x, bs = "re")
  if (job$method == "REML") {
    located <- mgcv::bam(formula, data = data, method = "fREML")
    # smoothing parameters fixed, gam runs no search (its method would only add a score)
    model <- mgcv::gam(formula, data = data, sp = located$sp)
    converged <- isTRUE(located$converged) &&
      identical(located$outer.info$conv, "full convergence")
    sp <- located$sp
    search <- "bam(method = \"fREML\"), then gam at its smoothing parameters"
  } else {
    model <- mgcv::gam(formula, data = data, method = job$method)
    converged <- isTRUE(model$converged)
    sp <- model$sp
    search <- sprintf("gam(method = \"%s\")", job$method)
  }
  s <- summary(model)
  p <- s$p.table["(Intercept)", ]
  grid <- data.frame(x = as.numeric(job$grid), uid = data$uid[[1]])
  curve <- predict(model, newdata = grid, type = "terms", terms = "s(x)", se.fit = TRUE)
  fit <- unname(curve$fit[, 1])
  se <- unname(curve$se.fit[, 1])
  list(
    name = spec$name, outcome = spec$outcome, distance = spec$distance,
    n = nrow(data), participants = nlevels(data$uid), k = k, method = job$method,
    intercept = list(estimate = unname(p[["Estimate"]]), se = unname(p[["Std. Error"]]),
                     t = unname(p[["t value"]]), p = unname(p[["Pr(>|t|)"]])),
    smooth = smooth_row(s$s.table, "s(x)"),
    participant_intercept = smooth_row(s$s.table, "s(uid)"),
    participant_slope = smooth_row(s$s.table, "s(uid,x)"),
    aic = AIC(model), deviance_explained = s$dev.expl, r_squared = s$r.sq,
    scale = model$sig2, converged = converged, search = search,
    smoothing_parameters = unname(sp),
    curve = list(d = as.numeric(job$grid), fit = fit, se = se,
                 lo = fit - qnorm(0.975) * se, hi = fit + qnorm(0.975) * se),
    seconds = proc.time()[["elapsed"]] - started
  )
}

fit_clmm <- function() {
  started <- proc.time()[["elapsed"]]
  columns <- as.character(job$columns)
  random <- if (is.null(job$slope)) "(1 | uid)" else sprintf("(1 + %s | uid)", job$slope)
  formula <- as.formula(sprintf("ordered(y) ~ %s + %s", paste(columns, collapse = " + "),
                                random))
  data <- frame
  data$y <- factor(data[[job$outcome]], levels = 1:7, ordered = TRUE)
  data <- droplevels(data)
  model <- ordinal::clmm(formula, data = data, link = "logit", threshold = "flexible")
  co <- summary(model)$coefficients
  beta <- lapply(columns, function(c) list(
    name = c, estimate = unname(co[c, "Estimate"]), se = unname(co[c, "Std. Error"])))
  list(coefficients = beta, thresholds = unname(model$alpha),
       logLik = as.numeric(logLik(model)), n = nrow(data),
       participants = nlevels(data$uid), random = random,
       seconds = proc.time()[["elapsed"]] - started)
}

versions <- list(r_version = paste(R.version$major, R.version$minor, sep = "."))
if (job$kind == "gamm") {
  versions$mgcv_version <- as.character(packageVersion("mgcv"))
  result <- c(versions, list(models = lapply(seq_len(nrow(job$models)),
                                             function(i) fit_gamm(as.list(job$models[i, ])))))
} else if (job$kind == "clmm") {
  versions$ordinal_version <- as.character(packageVersion("ordinal"))
  result <- c(versions, fit_clmm())
} else {
  stop(sprintf("unknown job kind %s", job$kind))
}
write_json(result, args[[3]], auto_unbox = TRUE, digits = NA, na = "null", null = "null")
